package engine

import (
	"sync"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// crashGrace is how long a load that died waits for news of its own server:
// a killed server takes its load's connections with it, and the server's
// death, not the load's lost connection, is then the cause to report.
const crashGrace = 250 * time.Millisecond

// realCrashGrace is crashGrace for a side served by a real server.
const realCrashGrace = 2 * time.Second

// crashOf describes child c of side sideName, which died while it should
// have run; uri is the side's target and other the side's other child.
func (p *Pair) crashOf(side model.SideID, uri string, c, other *child) *model.Crash {
	if c.role == model.RoleLoad && other != nil {
		grace := crashGrace
		if other.realPID > 0 {
			// A real server's end reaches the load (EOF) well before its
			// child has reaped it, read its stderr and said so.
			grace = realCrashGrace
		}
		t := time.NewTimer(grace)
		select {
		case <-other.exited:
			c = other
		case <-t.C:
		}
		t.Stop()
	}
	return &model.Crash{T: p.elapsed(), Side: side, Role: c.role, Target: uri,
		Status: c.status(), Reason: c.reason(), Stderr: c.stderrLines()}
}

// settleTimeout bounds the run's last look at its children (settle): a
// load that lost its target closes its connections and exits, which takes
// a moment, longer on a loaded machine.
const settleTimeout = 10 * time.Second

// settle is a run's last look at its children before it reports, once its
// duration is over: it asks each side's load whether its target is still
// there (the poll has the load check its connections, also while paused),
// and waits until every child that died, or is about to because it lost its
// target, has had its crash reported. Without it a target killed near the
// end of a run, or a crash report still in flight (crashGrace), was lost
// with the children Stop takes down, and the run said it was complete.
func (p *Pair) settle() {
	var wg sync.WaitGroup
	for _, s := range p.sides {
		wg.Add(1)
		go func() { defer wg.Done(); s.settle(time.Now().Add(settleTimeout)) }()
	}
	wg.Wait()
}

// settle is Pair.settle for one side, bounded by deadline.
func (s *side) settle(deadline time.Time) {
	srv, ld := s.children()
	lost := false
	if ld := s.runningLoad(); ld != nil {
		m, err := ld.call(wire.Cmd{Op: "poll"}, time.Until(deadline))
		lost = err == nil && m.Lost != ""
	}
	for _, c := range []*child{srv, ld} {
		if c == nil {
			continue
		}
		select {
		case <-c.exited:
		default:
			if !lost || c != ld {
				continue // alive and well
			}
		}
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-c.reported:
		case <-t.C:
		}
		t.Stop()
	}
}
