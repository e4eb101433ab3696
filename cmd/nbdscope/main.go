// Command nbdscope makes the NBD data path visible: a TUI and headless
// commands that run NBD servers and load against them and measure the
// socket. This file only starts the command tree (root.go); the logic
// lives in the packages nbd, engine, presets and ui.
package main

import "os"

func main() {
	controllerProcessors(os.Args[1:], os.Getenv("GOMAXPROCS"))
	controllerGC(os.Args[1:], os.Getenv("GOGC"))
	os.Exit(run(os.Args[1:]))
}

// run runs one command line with the process's standard files and
// returns its exit status (exit.go).
func run(args []string) int {
	return newApp(os.Stdin, os.Stdout, os.Stderr).execute(args)
}
