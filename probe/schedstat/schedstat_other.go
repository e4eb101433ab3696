//go:build !linux

package schedstat

import (
	"runtime"
	"time"
)

// Supported reports whether schedstat can be read here.
func Supported() error {
	return &Unavailable{Cause: CauseOS, Reason: runtime.GOOS + " keeps no per-thread run-queue delay that can be read",
		Fix: "measure on Linux"}
}

// Read is not available here.
func Read(pid int) (Process, error) { return Process{}, Supported() }

// ReadTree is not available here.
func ReadTree(pid int) (Snapshot, error) { return Snapshot{}, Supported() }

// ReadPIDs reads nothing here.
func ReadPIDs(pids ...int) Snapshot { return Snapshot{} }

func readPIDs(known map[int]time.Duration, pids []int) Snapshot { return Snapshot{} }

func supportedOnce() error { return Supported() }
