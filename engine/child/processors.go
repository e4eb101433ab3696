package child

import (
	"os"
	"runtime"
)

// followPlacement sets the runtime's processors to the CPUs this process
// may run on now, before the load sends: the controller pins a child's
// threads after it started (engine's place), and the runtime notices a
// narrower mask only at its own check, once a second. The ppoll reader
// keeps the runtime asleep only on one processor (nbd's readerthread.go),
// and calibrate's measurements are shorter than that second: a load just
// pinned to one core read with two processors for its first measurement
// (1 GiB, 0.17 s). A GOMAXPROCS set by the user wins.
func followPlacement() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.SetDefaultGOMAXPROCS()
	}
}
