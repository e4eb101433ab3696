package sweep

import (
	"sync"
	"time"

	"nbdscope/clientrun"
	"nbdscope/model"
	"nbdscope/probe/schedstat"
)

// Where an exec sweep's client's time went: on a CPU, waiting for one,
// asleep (probe/schedstat). Its threads' schedstat goes with them when it
// exits, and wait4 keeps none of it, so it is read while the client runs:
// once as it is released (the baseline), then every execSchedPoll, over
// its process group's members (a client that starts others). Each thread
// counts from its first read (or its start, when it is new) to its last:
// one difference, not a sum of the polls', since the kernel adds a wait
// to a thread's total only when the wait ends, and a wait across a poll
// would be counted as sleep before it and as wait after it (a sum over
// 25 ms polls ran 11% over the thread's wall at load 15). The span is from
// the baseline to the last read that found the client; what the client
// did after it (at most a poll, 25 ms of a 1.2 s run) is left out.

// execSchedPoll is how often a running client's threads are read: a read
// of one 4-thread process is about 0.1-0.2 ms, so 25 ms costs the sweep
// under 1% of a core while leaving at most 2% of a one-second run out.
// Its group's members are looked up every execSchedMembers reads (a
// walk of their children lists).
const (
	execSchedPoll    = 25 * time.Millisecond
	execSchedMembers = 10
)

// execSched follows one client run's schedstat.
type execSched struct {
	group *clientrun.Group
	end   chan struct{}
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	pids  []int
	base  time.Duration            // the baseline read's time (boot clock); 0 until a read finds the client
	last  time.Duration            // the last read that found it
	first map[int]schedstat.Thread // each thread at its first read (Run, Wait 0 and Start its start when new)
	from  map[int]time.Duration    // when each thread's count starts
	now   map[int]schedstat.Thread // each thread at its last read
	at    map[int]time.Duration    // when that was
}

// startExecSched starts following the client with pid (its process
// group's leader), held before its exec: the first read is the baseline.
// Where schedstat cannot be read it reads nothing (finish: not measured).
func startExecSched(pid int) *execSched {
	s := &execSched{group: clientrun.NewGroup(pid), end: make(chan struct{}), done: make(chan struct{}), pids: []int{pid},
		first: map[int]schedstat.Thread{}, from: map[int]time.Duration{}, now: map[int]schedstat.Thread{}, at: map[int]time.Duration{}}
	if schedstat.Supported() != nil {
		close(s.done)
		return s
	}
	s.read(false)
	go s.poll()
	return s
}

// poll reads the client every execSchedPoll until finish.
func (s *execSched) poll() {
	defer close(s.done)
	t := time.NewTicker(execSchedPoll)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-s.end:
			return
		case <-t.C:
		}
		s.read(n%execSchedMembers == 0)
	}
}

// read reads the client's processes' threads, looking its group's
// members up again first when members is set.
func (s *execSched) read(members bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if members {
		if _, ok := s.group.Usage(); ok {
			if m := s.group.Members(); len(m) > 0 {
				s.pids = m
			}
		}
	}
	snap := schedstat.ReadPIDs(s.pids...)
	if len(snap.Procs) == 0 {
		return
	}
	baseline := s.base == 0
	if baseline {
		s.base = snap.At
	}
	s.last = snap.At
	for _, p := range snap.Procs {
		for _, th := range p.Threads {
			s.now[th.TID], s.at[th.TID] = th, snap.At
			if f, ok := s.first[th.TID]; ok && f.Start == th.Start {
				continue
			}
			// Seen first now: counted from here at the baseline, from
			// its start when it began since.
			s.first[th.TID], s.from[th.TID] = th, snap.At
			if !baseline {
				s.first[th.TID] = schedstat.Thread{TID: th.TID, Start: th.Start}
				s.from[th.TID] = max(th.Start, s.base)
			}
		}
	}
}

// finish stops following and gives where the client's time went, its
// threads' sums; Span 0 (not measured) where schedstat cannot be read or
// the client was never found.
func (s *execSched) finish() model.Sched {
	s.once.Do(func() { close(s.end) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base == 0 {
		return model.Sched{}
	}
	var run, wait, sleep, leadRun, leadWait time.Duration
	for tid, th := range s.now {
		f := s.first[tid]
		r, w := th.Run-f.Run, th.Wait-f.Wait
		if r >= leadRun {
			leadRun, leadWait = r, w
		}
		// A thread's wall is to the last read that found the client: one
		// gone before it is taken to the last read it was seen at.
		wall := max(s.at[tid]-s.from[tid], r+w)
		run, wait, sleep = run+r, wait+w, sleep+wall-r-w
	}
	return model.Sched{RunS: run.Seconds(), WaitS: wait.Seconds(), SleepS: sleep.Seconds(), SpanS: (s.last - s.base).Seconds(),
		LeadRunS: leadRun.Seconds(), LeadWaitS: leadWait.Seconds()}
}
