package engine

import (
	"fmt"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// A real client that moves nothing (it exits at once, 'true {uri}', or
// never connects) is not a measurement. Its payload is known only here,
// from the side's server: the controller counts the client's runs in a
// row that moved none and tells the load (wire.OpIdle), which backs off
// its restarts and, at wire.IdleRunLimit, fails the side with the
// command and what its last run did. A client that moved nothing in the
// whole run (one that never ends: sh -c 'sleep 1000') has its figures
// n/a, not a throughput of 0 that two sides' comparison would call a
// difference beyond the noise.

// execIdle is the count of an exec side's client runs in a row that
// moved no payload, for one load child.
type execIdle struct {
	load  *child
	seen  uint64 // the server's payload at the last poll
	runs  int    // finished runs in a row with none moved
	told  int    // what the load was last told
	moved bool   // the client moved payload at some time in the run
}

// countIdle notes a poll of an exec side: the runs that finished since
// the last (lm.ExecRuns) and the server's payload (sm). It says what to
// tell the load (tell: the count changed). s.mu is held.
func (s *side) countIdle(ld *child, lm, sm wire.Msg) (runs int, tell bool) {
	if s.cfg.Exec == "" || sm.Payload == nil {
		return 0, false
	}
	id := &s.idle
	total := sm.Payload.Total()
	if id.load != ld {
		moved := id.moved
		*id = execIdle{load: ld, seen: total, moved: moved}
		return 0, false
	}
	if total > id.seen {
		id.runs, id.moved = 0, true
	} else {
		id.runs += len(lm.ExecRuns)
	}
	id.seen = total
	if id.runs == id.told {
		return 0, false
	}
	id.told = id.runs
	return id.runs, true
}

// tellIdle tells the load ld how many runs in a row moved nothing; at
// the limit the load fails, and its exit is the side's crash.
func tellIdle(ld *child, runs int) {
	go ld.call(wire.Cmd{Op: wire.OpIdle, Int: runs}, 2*time.Second) // a load that is gone has said why itself
}

// noPayload marks an exec side's span in which its client moved no
// payload: throughput n/a, not 0. s.mu is held.
func noPayload(sc model.SideConfig, f *model.Figures) {
	if sc.Exec != "" && f.Bytes == 0 {
		f.ThroughputBps = model.Unknown
	}
}

// warnNoPayload says, at the run's end, which exec side's client moved no
// payload in the whole run, and so has no figures: the side failed, and
// the run is partial.
func (p *Pair) warnNoPayload() {
	for _, s := range p.sides {
		if s == nil {
			continue
		}
		s.mu.Lock()
		f, _, _ := s.meter.Summary(true, s.cfg.Exec != "", s.execCounted)
		sc, moved, active := s.cfg, f.Bytes > 0 || s.idle.moved, f.Seconds > 0
		s.mu.Unlock()
		if sc.Exec == "" || moved || !active {
			continue
		}
		p.rec.fail(fmt.Sprintf("side %s: the client %q moved no payload in the whole run", s.name, sc.Exec))
		p.raise(model.Warn(s.id, model.ExecIdle{Command: sc.Exec}))
	}
}
