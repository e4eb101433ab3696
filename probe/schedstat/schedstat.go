// Package schedstat tells where a process's time went: on a CPU, waiting
// on a run queue for one, or asleep. The kernel keeps the first two per
// thread, exactly and for free, in /proc/PID/task/TID/schedstat (with
// CONFIG_SCHED_INFO: nanoseconds run, nanoseconds runnable but waiting,
// timeslices run); the thread's start time is field 22 of its stat. Time
// asleep is what is left: the thread's wall time (since it started, or
// over an interval) less run and wait.
//
// The figure it adds is the wait: a client that waited for a CPU lost
// time to contention, one that slept waited on its peer. A process's
// figures are its threads' sums; a tree's are listed per process.
// Threads that exited between two snapshots take their time with them
// (their run time is then only in the parent's CPU accounting).
//
// The kernel adds a wait to a thread's total when the wait ends (when the
// thread gets a CPU), so a thread waiting when it is read shows its wait
// so far as sleep: each end of an interval can move up to one scheduling
// delay from wait to sleep (a shell loop on this 2-core machine at load
// average 15: 0–20 ms of 2 s). Read over seconds, not milliseconds.
package schedstat

import (
	"fmt"
	"time"
)

// Times is where a thread's, or a process's (its threads' sum), time
// went over a span. Run + Wait + Sleep = Wall.
type Times struct {
	Run    time.Duration // on a CPU
	Wait   time.Duration // runnable, waiting on a run queue for a CPU
	Sleep  time.Duration // neither: asleep or blocked (Wall − Run − Wait)
	Wall   time.Duration // the span (per thread: since it started, or the interval)
	Slices uint64        // timeslices run on a CPU
	// Threads is how many threads the figures sum.
	Threads int
	// LeadRun and LeadWait are the run and wait of each process's lead
	// thread over the span: the thread that ran the most (in each
	// interval Counter reads), the one doing the process's work. Its
	// wait is the contention that slows that work; the others' is mostly
	// the runtime's helpers (a Go process's sysmon, woken about 800
	// times a second while its writer copies) queued behind it on the
	// process's own core: a quiet pair's server waited 0.21 cores in its
	// sysmon thread, 0.10 in its writer, and 0.30 in all.
	LeadRun, LeadWait time.Duration
}

// Add returns the field-wise sum.
func (t Times) Add(o Times) Times {
	return Times{Run: t.Run + o.Run, Wait: t.Wait + o.Wait, Sleep: t.Sleep + o.Sleep,
		Wall: t.Wall + o.Wall, Slices: t.Slices + o.Slices, Threads: t.Threads + o.Threads,
		LeadRun: t.LeadRun + o.LeadRun, LeadWait: t.LeadWait + o.LeadWait}
}

// Cores is d as a share of span: the cores a process kept busy (Run), or
// waiting (Wait), over the span. 0 when span is.
func Cores(d, span time.Duration) float64 {
	if span <= 0 {
		return 0
	}
	return float64(d) / float64(span)
}

// Thread is one reading of a thread.
type Thread struct {
	TID    int
	Run    time.Duration // since the thread started
	Wait   time.Duration
	Slices uint64
	Start  time.Duration // on the boot clock (CLOCK_BOOTTIME), in clock ticks' resolution
}

// Process is one reading of a process's threads.
type Process struct {
	PID     int
	PPID    int
	Comm    string
	Threads []Thread
}

// Snapshot is a reading of processes at one time on the boot clock.
type Snapshot struct {
	At    time.Duration // CLOCK_BOOTTIME when it was read
	Procs []Process
}

// Unavailable is why the figures cannot be had here (n/a, not 0).
type Unavailable struct {
	Cause  string // one of the Cause… below, for a reader that words it itself
	Reason string // what is missing
	Fix    string // what would give it
}

// The causes of an Unavailable.
const (
	CauseOS     = "os"     // not Linux: no per-thread run-queue delay to read
	CauseKernel = "kernel" // no /proc/PID/schedstat: built without CONFIG_SCHED_INFO
	CauseOff    = "off"    // it reads 0: sched_info off at run time (before 5.15)
	CauseProc   = "proc"   // /proc could not be read
)

func (u *Unavailable) Error() string {
	return fmt.Sprintf("time waiting for a CPU n/a: %s (%s)", u.Reason, u.Fix)
}

// Sub is where each process of s (the later snapshot) spent its time
// since earlier: per thread, the run and wait added since, over the wall
// time since earlier or since the thread started, whichever is later;
// and its lead thread's (Times.LeadRun).
// A process not in earlier is counted from its threads' start.
func (s Snapshot) Sub(earlier Snapshot) map[int]Times {
	before := map[int]Thread{}
	for _, p := range earlier.Procs {
		for _, th := range p.Threads {
			before[th.TID] = th
		}
	}
	out := make(map[int]Times, len(s.Procs))
	for _, p := range s.Procs {
		var sum, lead Times
		for _, th := range p.Threads {
			from := max(earlier.At, th.Start)
			b, seen := before[th.TID]
			if !seen || b.Start != th.Start { // a new thread (or a reused TID)
				b, from = Thread{}, th.Start
			}
			t := span(th.Run-b.Run, th.Wait-b.Wait, th.Slices-b.Slices, s.At-from)
			sum = sum.Add(t)
			if t.Run >= lead.Run {
				lead = t
			}
		}
		sum.LeadRun, sum.LeadWait = lead.Run, lead.Wait
		out[p.PID] = sum
	}
	return out
}

// Lifetime is where each process of s spent its time since its threads
// started.
func (s Snapshot) Lifetime() map[int]Times { return s.Sub(Snapshot{}) }

// span is one thread's Times over wall; the start time's clock-tick
// resolution can leave run + wait a little over wall, and sleep is then 0.
func span(run, wait time.Duration, slices uint64, wall time.Duration) Times {
	wall = max(wall, run+wait)
	return Times{Run: run, Wait: wait, Sleep: wall - run - wait, Wall: wall, Slices: slices, Threads: 1}
}
