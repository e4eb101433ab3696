// Command nbdscope makes the NBD data path visible: a TUI and headless
// commands that run NBD servers and load against them and measure the
// socket. This file only dispatches sub-commands; the logic lives in the
// packages nbd, engine, presets and ui.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `nbdscope — see the NBD data path: throughput, syscalls per 2 MiB, CPU.

Usage:
  nbdscope [flags]            the interactive explorer (TUI) on the default preset
  nbdscope serve [flags]      a standalone NBD server (see 'nbdscope serve --help')
  nbdscope run [flags]        a headless run with a summary table (--json, --csv)
  nbdscope sweep [flags]      a send-buffer sweep table (--json, --csv, --markdown)
  nbdscope doctor             platform socket-buffer facts and fixes
  nbdscope presets ...        list | show | rm | rename | export | import
  nbdscope runs ...           list | show | rm | export | compare

Run 'nbdscope COMMAND --help' for the flags of a command.
`

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches and returns the process exit status (exitcode.go).
func run(args []string) int {
	var err error
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		err = cmdServe(args)
	case "help":
		fmt.Print(usage)
		return 0
	default:
		if h, ok := extraCommands[cmd]; ok {
			err = h(args)
			break
		}
		if cmd != "" {
			fmt.Fprintf(os.Stderr, "nbdscope: unknown command %q\n\n%s", cmd, usage)
			return 2
		}
		err = cmdTUI(args)
	}
	code := exitCode(err)
	if code != exitOK {
		fmt.Fprintf(os.Stderr, "nbdscope: %v\n", err)
	}
	return code
}

// extraCommands is filled by the files of other sub-commands (init), so
// that each lives in its own file.
var extraCommands = map[string]func([]string) error{}

// usageError marks bad flags or arguments (exit status 2).
type usageError struct{ error }

func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// parseFlags parses and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageErrorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
