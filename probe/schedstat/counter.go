package schedstat

import (
	"sync"
	"time"
)

// Counter turns readings of a set of processes into cumulative times, as
// a process's other counters are (getrusage's CPU): each Read reads the
// processes' threads once and adds what they did since the last Read.
// The set may change between reads (a real client run in a loop, a
// server's children): a process new since the last read is counted from
// its threads' start; one gone takes its time since the last read with
// it. The first Read sets the start and adds nothing.
//
// Its cost is a listing of each process's task directory, a read of its
// stat and of each thread's schedstat (a thread's stat, for its start,
// only when it is new): for one of our children (8 threads) 10 small
// /proc reads a poll.
type Counter struct {
	mu      sync.Mutex
	prev    Snapshot
	started bool
	// seen: some read found a process; until then the span does not
	// run, so a set never found (a server not its group's leader) is
	// not measured rather than measured idle.
	seen bool
	tot  Times
	span time.Duration
}

// Read reads pids and returns the times so far: the threads' run, wait
// and sleep summed, and span, the wall time the reads have covered
// (once, however many processes and threads). An error is an
// *Unavailable where the kernel keeps none; a process that is gone is
// left out. The span starts at the first read that finds a process.
func (c *Counter) Read(pids ...int) (tot Times, span time.Duration, err error) {
	if err := supportedOnce(); err != nil {
		return Times{}, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	known := make(map[int]time.Duration, len(c.prev.Procs)*8)
	for _, p := range c.prev.Procs {
		for _, th := range p.Threads {
			known[th.TID] = th.Start
		}
	}
	s := readPIDs(known, pids)
	c.seen = c.seen || len(s.Procs) > 0
	if c.started && c.seen && s.At > c.prev.At {
		for _, t := range s.Sub(c.prev) {
			t.Threads = 0 // a count of threads is not a time: Threads is of the latest read
			c.tot = c.tot.Add(t)
		}
		c.span += s.At - c.prev.At
	}
	c.prev, c.started = s, true
	c.tot.Threads = 0
	for _, p := range s.Procs {
		c.tot.Threads += len(p.Threads)
	}
	return c.tot, c.span, nil
}
