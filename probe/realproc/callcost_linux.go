package realproc

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// MeasureCallCost measures CallCost: the counter is opened on this
// process the way a real process's is, and closed between rounds, so the
// uncounted rounds run with no program attached. The error is a
// *syscount.Unavailable when counting is not allowed here.
func MeasureCallCost() (CallCost, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return CallCost{}, fmt.Errorf("a socketpair to time: %w", err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	var on, off time.Duration
	for range callCostRounds {
		d, err := callLoop(pair)
		if err != nil {
			return CallCost{}, err
		}
		off += d
		k, err := OpenCalls(os.Getpid())
		if err != nil {
			return CallCost{}, err
		}
		d, err = callLoop(pair)
		got := k.Close()
		if err != nil {
			return CallCost{}, err
		}
		if got.SendCalls < callCostOps {
			return CallCost{}, fmt.Errorf("the counter saw %d of the loop's %d writes", got.SendCalls, callCostOps)
		}
		on += d
	}
	calls := 2 * callCostOps * callCostRounds
	c := CallCost{Calls: calls, Ratio: float64(on) / float64(off)}
	if on > off {
		c.PerCall = (on - off) / time.Duration(calls)
	}
	return c, nil
}

// callLoop times callCostOps writes and reads of one byte in the
// thread's own CPU.
func callLoop(pair [2]int) (time.Duration, error) { return TimeCalls(pair, callCostOps) }

// TimeCalls times ops writes of one byte to pair[0] and reads of it from
// pair[1] in the calling thread's own CPU time, which holds what programs
// attached to the socket layer run in its calls: what doctor measures a
// call's instruments by, with them on and off.
func TimeCalls(pair [2]int, ops int) (time.Duration, error) {
	buf := []byte{0}
	t0, err := threadCPU()
	if err != nil {
		return 0, err
	}
	for range ops {
		if _, err := unix.Write(pair[0], buf); err != nil {
			return 0, err
		}
		if _, err := unix.Read(pair[1], buf); err != nil {
			return 0, err
		}
	}
	t1, err := threadCPU()
	return t1 - t0, err
}

func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("the thread's CPU time: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
