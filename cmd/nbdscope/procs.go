package main

import "runtime"

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
	if gomaxprocsEnv != "" {
		return false
	}
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
