package main

import (
	"runtime"
	"runtime/debug"
)

// oneProcessorFor says whether a command line runs a controller, which
// then runs its goroutines on one processor (runtime.GOMAXPROCS(1)). A
// controller moves no data: it samples, polls its children and draws,
// all of it waiting, and with a processor per core every goroutine woken
// also woke an idle processor's thread that found nothing to run and
// slept again: `run`'s controller took 2.1-2.2% of a core, 1.3-1.5% on
// one processor (bench/README, "The controller's own CPU"). The commands
// that move data keep every core: the children (__child), which their
// pinning holds to one anyway, and serve. GOMAXPROCS set by the user wins.
func oneProcessorFor(args []string, gomaxprocsEnv string) bool {
	return gomaxprocsEnv == "" && isController(args)
}

// isController says whether a command line runs a controller: the
// explorer or a command, not __child or serve, which move the data.
func isController(args []string) bool {
	for _, a := range args {
		if len(a) > 0 && a[0] == '-' {
			continue // a flag of the root command: the explorer, or a command after it
		}
		return a != "__child" && a != "serve"
	}
	return true // the explorer
}

// controllerProcessors holds a controller to one processor.
func controllerProcessors(args []string, gomaxprocsEnv string) {
	if oneProcessorFor(args, gomaxprocsEnv) {
		runtime.GOMAXPROCS(1)
	}
}

// controllerGCPercent is a controller's GOGC. Its live heap is 1-3 MB,
// under the runtime's 4 MB floor, so at GOGC 100 it collected more than
// once a second (GODEBUG=gctrace=1: 20 collections in 15 s of the
// explorer), each a wake-up of the mark worker's thread and preemption
// signals to the running goroutine; at 400 the floor is 16 MB and it
// collects every few seconds (bench/README, "The controller's own CPU").
const controllerGCPercent = 400

// controllerGC sets a controller's GOGC; GOGC set by the user wins.
func controllerGC(args []string, gogcEnv string) {
	if gogcEnv == "" && isController(args) {
		debug.SetGCPercent(controllerGCPercent)
	}
}
