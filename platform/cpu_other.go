//go:build !linux

package platform

import "runtime"

// PinSupported is false: macOS has no way to hold a process to a CPU (its
// thread affinity tags are hints to keep threads together, not a mask).
const PinSupported = false

// AllowedCPUs lists the CPUs as 0…NumCPU-1: there is no affinity mask to
// read here.
func AllowedCPUs() []int {
	cpus := make([]int, runtime.NumCPU())
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// PinProcess is not supported here; with no cpus (meaning "any") it is a
// no-op, since that is how every process runs already.
func PinProcess(pid int, cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	return ErrPinUnsupported
}

// StartOn calls start; holding it to cpus is not supported here.
func StartOn(cpus []int, start func() error) error {
	if len(cpus) == 0 {
		return start()
	}
	return ErrPinUnsupported
}
