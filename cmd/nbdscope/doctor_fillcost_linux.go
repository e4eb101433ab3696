package main

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/probe/realproc"
)

// measureFillCost measures what the fill programs cost a socket call
// here, as BenchmarkFillCost (probe/syscount) does: a 1-byte write and
// read loop on a socketpair in the thread's own CPU, alternating rounds
// with no programs loaded, loaded but watching no socket, and watching
// the loop's sender. The programs are loaded for each round and closed
// after it, so the bare rounds run with none attached.
func measureFillCost() (*doctorFillCost, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("a socketpair to time: %w", err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	var st unix.Stat_t
	if err := unix.Fstat(pair[0], &st); err != nil {
		return nil, fmt.Errorf("the socketpair's inode: %w", err)
	}
	var r fillCostRounds
	for range fillCostRoundCount {
		d, err := fillCostLoop(pair)
		if err != nil {
			return nil, err
		}
		m, err := openFillMeter()
		if err != nil {
			return nil, err
		}
		b, err := fillCostLoop(pair)
		if err == nil {
			err = m.Set("doctor", []uint64{st.Ino})
		}
		var w time.Duration
		if err == nil {
			w, err = fillCostLoop(pair)
		}
		m.Close()
		if err != nil {
			return nil, err
		}
		r.bare, r.bystander, r.watched = append(r.bare, d), append(r.bystander, b), append(r.watched, w)
	}
	return r.cost(2 * fillCostOps), nil
}

// fillCostLoop times fillCostOps writes and reads of one byte in the
// thread's own CPU, which holds what the programs run in its calls.
func fillCostLoop(pair [2]int) (time.Duration, error) { return realproc.TimeCalls(pair, fillCostOps) }
