package sockdiag

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleepFor sleeps d on the calling thread: clock_nanosleep, which the
// kernel wakes the thread from itself, with no other thread involved.
// An interruption (a signal to the thread: the runtime's preemption)
// ends it early; the caller's loop sleeps again.
func sleepFor(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_ = unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
}
