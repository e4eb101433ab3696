package platform

import (
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

func faultCost() (time.Duration, bool) {
	var rounds []time.Duration
	for range 3 {
		d, ok := faultRound()
		if !ok {
			return 0, false
		}
		rounds = append(rounds, d)
	}
	slices.Sort(rounds)
	return rounds[1], true
}

// faultRound touches FaultProbeBytes of fresh memory once and returns the
// time per fault. The thread is held so that RUSAGE_THREAD counts the
// faults of the loop and nothing else's.
func faultRound() (time.Duration, bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := unix.Mmap(-1, 0, FaultProbeBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0, false
	}
	defer unix.Munmap(b)
	unix.Madvise(b, unix.MADV_NOHUGEPAGE) // one fault per 4 KiB, as a heap buffer takes them
	var before, after unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &before) != nil {
		return 0, false
	}
	start := time.Now()
	for off := 0; off < len(b); off += 4096 {
		b[off] = 1
	}
	took := time.Since(start)
	if unix.Getrusage(unix.RUSAGE_THREAD, &after) != nil {
		return 0, false
	}
	faults := int64(after.Minflt - before.Minflt)
	if faults < int64(len(b)/4096/2) {
		return 0, false // not one fault a page: nothing to divide by
	}
	return took / time.Duration(faults), true
}
