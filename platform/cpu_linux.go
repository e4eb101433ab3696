package platform

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// PinSupported is true where a process can be held to chosen CPUs.
const PinSupported = true

// AllowedCPUs lists the CPUs this process may run on (sched_getaffinity:
// it honours taskset and cpuset cgroups), in ascending order.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// PinProcess holds every thread of process pid to cpus (all allowed CPUs
// when cpus is empty). Affinity is per thread on Linux, and a Go process
// starts threads at any time; a thread inherits its creator's mask, so
// once every existing thread is pinned all later ones are too. Threads
// born during a pass may have copied the old mask: passes repeat until one
// finds nothing to change.
func PinProcess(pid int, cpus []int) error {
	if len(cpus) == 0 {
		cpus = AllowedCPUs()
	}
	want, err := cpuSet(cpus)
	if err != nil {
		return err
	}
	for pass := 0; pass < 20; pass++ {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return fmt.Errorf("pinning process %d: %w", pid, err)
		}
		changed := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			var have unix.CPUSet
			if unix.SchedGetaffinity(tid, &have) == nil && have == want {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &want); err != nil {
				if err == unix.ESRCH {
					continue // the thread ended
				}
				return fmt.Errorf("pinning thread %d of process %d to cpus %v: %w", tid, pid, cpus, err)
			}
			changed++
		}
		if changed == 0 {
			return nil
		}
	}
	return fmt.Errorf("pinning process %d: its threads kept changing", pid)
}

// cpuSet is cpus as an affinity mask.
func cpuSet(cpus []int) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return set, fmt.Errorf("cpu %d: out of range", c)
		}
		set.Set(c)
	}
	return set, nil
}

// StartOn calls start, which starts a child process, from an OS thread
// held to cpus (with no cpus, start is simply called). A child inherits
// the mask of the thread that forked it, and its threads and children
// inherit it in turn, so the whole client tree runs held from its first
// instruction: pinning it after it started would leave the threads it
// made meanwhile, and its children, wherever they began.
//
// The thread gets its own mask back and is handed back to the runtime.
// Ending the goroutine locked instead, so that the runtime retires the
// thread, looks tidier but is not safe: a child started earlier from
// that same thread with Pdeathsig (our server children) would be
// signalled as if its parent had died.
func StartOn(cpus []int, start func() error) error {
	if len(cpus) == 0 {
		return start()
	}
	set, err := cpuSet(cpus)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("reading this thread's cpus: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("holding a thread to cpus %v: %w", cpus, err)
	}
	// Restoring a mask the thread just had cannot fail short of the
	// cpuset itself changing meanwhile; then the thread keeps the
	// narrower mask, which only confines where Go runs some goroutines.
	defer unix.SchedSetaffinity(0, &old)
	return start()
}
