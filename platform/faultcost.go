package platform

import "time"

// FaultProbeBytes is how much fresh memory FaultCost touches: 16384 pages
// of 4 KiB, enough for a per-fault figure that one slow page cannot move.
const FaultProbeBytes = 64 << 20

// FaultCost is what a minor page fault costs on this machine: the
// median, over three rounds, of the time to write one byte into each
// 4 KiB page of FaultProbeBytes of fresh anonymous memory (huge pages
// refused), divided by the faults the kernel counted for the thread.
//
// Why it matters: a process that faults a fresh buffer in for each request
// (glibc hands a 2 MiB buffer back to the kernel on free, and the next
// request maps it again; qemu-nbd 7.2 does this) takes 512 faults per
// 2 MiB of payload. At 0.5 µs a fault, as on bare metal, that is 0.13 s
// per GiB; a VM whose host backs guest memory lazily measured 10-25 µs,
// 2.6-6.5 s per GiB, which then sets the process's pace whatever its
// socket buffer. ok is false where it is not measured (not Linux).
func FaultCost() (per time.Duration, ok bool) { return faultCost() }
