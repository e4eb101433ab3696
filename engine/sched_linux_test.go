package engine

import (
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/probe/schedstat"
)

// threadsOf is how many threads process pid has now; 0 when it is gone.
func threadsOf(pid int) int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return 0
	}
	return len(ents)
}

// In a real run of the pair, each process's time on a CPU, waiting for
// one and asleep sum to its threads' wall time, within 2%: its span as
// the children read it, times its threads (counted from /proc at each
// sample; the bounds are the fewest and the most seen). And its time on
// a CPU is the CPU getrusage gives the server child over the same polls.
func TestSchedTimesSumToTheWall(t *testing.T) {
	if err := schedstat.Supported(); err != nil {
		t.Skip(err)
	}
	cfg := testConfig()
	cfg.Interval = model.Duration(250 * time.Millisecond)
	cfg.Duration = model.Duration(2 * time.Second)
	p := startPair(t, cfg)
	lo, hi := map[string]int{}, map[string]int{}
	note := func(name string, c *child) {
		if c == nil {
			return
		}
		n := threadsOf(c.pid())
		if n == 0 {
			return
		}
		if lo[name] == 0 || n < lo[name] {
			lo[name] = n
		}
		hi[name] = max(hi[name], n)
	}
	for u := range p.Updates() {
		if u.Sample == nil {
			continue
		}
		for _, s := range p.sides {
			s.mu.Lock()
			ld, srv := s.load, s.server
			s.mu.Unlock()
			note(s.name+" client", ld)
			note(s.name+" server", srv)
		}
	}
	rep := p.Report()
	for _, sd := range rep.Sides {
		for who, pr := range map[string]*model.Process{"client": &sd.Summary.Client, "server": sd.Summary.Server} {
			name := sd.Name + " " + who
			if pr == nil {
				t.Fatalf("%s: no figures", name)
			}
			s := pr.Sched
			if s.SpanS < 1 {
				t.Fatalf("%s: times over %.2f s of a 2 s run: %+v", name, s.SpanS, s)
			}
			threads := (s.RunS + s.WaitS + s.SleepS) / s.SpanS
			t.Logf("%s: run %.3f wait %.3f sleep %.3f s over %.3f s: %.3f threads' wall (%d-%d threads)",
				name, s.RunS, s.WaitS, s.SleepS, s.SpanS, threads, lo[name], hi[name])
			if threads < 0.98*float64(lo[name]) || threads > 1.02*float64(hi[name]) {
				t.Errorf("%s: run %.3f + wait %.3f + sleep %.3f s over %.3f s is %.3f threads' wall; it had %d-%d threads",
					name, s.RunS, s.WaitS, s.SleepS, s.SpanS, threads, lo[name], hi[name])
			}
			if !pr.CoresOnCPU.Known() || !pr.CoresWaiting.Known() || !pr.CoresAsleep.Known() || !pr.WaitSPer2MiB.Known() {
				t.Errorf("%s: a figure n/a where schedstat is read: %+v", name, pr)
			}
		}
		// The server's CPU is its whole process's from getrusage, read in
		// the same poll: the run time agrees with it.
		srv := sd.Summary.Server
		t.Logf("%s server: %.3f s on a CPU by schedstat, %.3f s by getrusage", sd.Name, srv.Sched.RunS, float64(srv.UserS+srv.SysS))
		if cpu := float64(srv.UserS + srv.SysS); math.Abs(srv.Sched.RunS-cpu) > 0.05*cpu+0.02 {
			t.Errorf("%s server: %.3f s on a CPU by schedstat, %.3f s by getrusage", sd.Name, srv.Sched.RunS, cpu)
		}
	}
}
