package platform

// CPUBusy is the CPU seconds the whole machine has spent busy since boot,
// every CPU and every process (the kernel's own work and time stolen by a
// hypervisor included), read from /proc/stat. ok is false where it cannot
// be read (not Linux). Two readings bracket a run: their difference less
// the CPU of nbdscope's own processes is what other processes took.
func CPUBusy() (seconds float64, ok bool) { return cpuBusy() }
