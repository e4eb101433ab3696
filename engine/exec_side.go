package engine

import (
	"strconv"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// The controller's side of an exec side (a real client command as a
// side's load; the child that runs it is engine/child's exec.go).

// execPayload is the payload the side's server moved between two polls
// (READ data sent plus WRITE data received): an exec side's bytes.
func execPayload(now, prev wire.Msg) uint64 {
	if now.Payload == nil || prev.Payload == nil {
		return 0
	}
	return now.Payload.Sub(*prev.Payload).Total()
}

// execClient marks what an exec side's client figures cannot hold as
// unknown: its latency (the requests are the client's own), and its socket
// calls unless the child counted them (counted: platform/syscount was
// allowed; otherwise a warning said why, callsWarning).
func execClient(sc model.SideConfig, counted bool, f *model.Figures) {
	if sc.Exec == "" {
		return
	}
	f.LatencyP50Ms, f.LatencyP99Ms, f.LatencyMaxMs = model.Unknown, model.Unknown, model.Unknown
	if counted {
		return
	}
	c := &f.Client
	c.RecvCallsPer2MiB, c.SendCallsPer2MiB, c.RecvEAGAINPer2MiB, c.SendEAGAINPer2MiB, c.EAGAINPer2MiB =
		model.Unknown, model.Unknown, model.Unknown, model.Unknown, model.Unknown
}

// noteCalls keeps whether a real process's socket calls are counted (the
// exec load's poll reply m) and warns once, with the reason and the fix,
// when they are not. s.mu is not held.
func (s *side) noteCalls(m wire.Msg) {
	s.mu.Lock()
	s.execCounted = m.CallsCounted
	warn := !m.CallsCounted && m.CallsNA != "" && !s.callsWarned
	if warn {
		s.callsWarned = true
	}
	s.mu.Unlock()
	if warn {
		s.p.warn(s.id, model.WarnCalls, "the client's socket calls are n/a: "+m.CallsNA, m.CallsFix)
	}
}

// emitExecRuns reports each client run that finished as an event: its
// time, at the poll that saw it.
func (p *Pair) emitExecRuns(sc model.SideConfig, now time.Time, runs []float64) {
	for _, secs := range runs {
		p.emit(model.Update{Event: &model.Event{T: p.clock(now).Seconds(), Side: sc.ID(), Setting: model.ExecRunEvent,
			To: strconv.FormatFloat(secs, 'f', 3, 64) + "s"}})
	}
}
