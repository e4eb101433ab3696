package engine

import (
	"strconv"
	"time"

	"nbdscope/engine/meter"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// The controller's side of an exec side (a real client command as a
// side's load; the child that runs it is engine/child's exec.go).

// noteExec notes what an exec side's poll says of its client: whether
// its calls are counted (noteCalls) and which way it moved its data
// (noteFlow). s.mu is not held.
func (s *side) noteExec(ld *child, lm, sm wire.Msg) {
	s.noteCalls(lm)
	s.noteFlow(ld, sm)
}

// noteFlow keeps which way the client moved its data since the last
// poll, as the side's server saw it (model.FlowOfPayload: the payload it
// sent against what it received), and warns, once per command and
// direction, when that is not its workload's: the figures follow what the
// client did. s.mu is not held.
func (s *side) noteFlow(ld *child, sm wire.Msg) {
	s.mu.Lock()
	sc := s.cfg
	var d nbd.Payload
	if s.load == ld {
		d = s.meter.PayloadSince(meter.Server{Payload: sm.Payload})
	}
	fl := s.meter.NoteClient(sc.Exec, d.ReadBytes, d.WriteBytes)
	key := sc.Exec + "\x00" + string(fl) + "\x00" + string(sc.Workload)
	warn := fl != "" && fl != model.FlowOf(sc.Workload) && s.flowWarned != key
	if warn {
		s.flowWarned = key
	}
	s.mu.Unlock()
	if warn {
		s.p.raise(model.Warn(s.id, model.ExecFlowOther{Flow: fl, Workload: sc.Workload, Sent: d.ReadBytes, Received: d.WriteBytes}))
	}
}

// bulkFlow is which way the side's bulk data goes now: an exec side's
// client's as last seen, else (our load, or before the client moved any)
// its workload's. s.mu is held.
func (s *side) bulkFlow() model.Flow {
	if fl := s.clientFlow(); fl != "" {
		return fl
	}
	return model.FlowOf(s.cfg.Workload)
}

// clientFlow is which way an exec side's client, the side's command now,
// was last seen moving its data; "" for our load, or before the client
// moved any. s.mu is held.
func (s *side) clientFlow() model.Flow {
	return s.meter.ClientFlow(s.cfg.Exec)
}

// noteCalls keeps whether a real process's socket calls are counted (the
// exec load's poll reply m) and warns once, with the reason and the fix,
// when they are not. s.mu is not held.
func (s *side) noteCalls(m wire.Msg) {
	s.mu.Lock()
	s.execCounted = m.CallsCounted
	warn := !m.CallsCounted && m.CallsNA != nil && !s.callsWarned
	if warn {
		s.callsWarned = true
	}
	s.mu.Unlock()
	if warn {
		s.p.raise(model.Warn(s.id, model.CallsUnknown{Reason: *m.CallsNA}))
	}
}

// emitExecRuns reports each client run that finished (lm.ExecRuns) as an
// event: its time, at the poll that saw it, and, when alternate turns
// stopped the client for part of it, its running time beside
// ("1.805s, 0.750s running"): the wall time alone read as a run three
// times as slow as the one whose throughput the side's sample has.
func (p *Pair) emitExecRuns(sc model.SideConfig, now time.Time, lm wire.Msg) {
	for i, secs := range lm.ExecRuns {
		to := strconv.FormatFloat(secs, 'f', 3, 64) + "s"
		if i < len(lm.ExecRunsActive) && lm.ExecRunsActive[i] < 0.99*secs {
			to += ", " + strconv.FormatFloat(lm.ExecRunsActive[i], 'f', 3, 64) + "s running"
		}
		p.emit(model.Update{Event: &model.Event{T: p.clock(now).Seconds(), Side: sc.ID(), Setting: model.ExecRunEvent, To: to}})
	}
}
