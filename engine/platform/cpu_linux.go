package platform

import (
	"fmt"
	"os"
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
	var want unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= len(want)*64 {
			return fmt.Errorf("cpu %d: out of range", c)
		}
		want.Set(c)
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
