package engine

import (
	"errors"
	"fmt"
	"time"

	"nbdscope/engine/meter"
	"nbdscope/engine/wire"
	"nbdscope/model"
)

// MeasureRequests measures a fixed number of requests on side i, whose
// load is paused: the load sends them and no more (engine/child's budget.go),
// and the figures are theirs alone. Seconds is the load's own wall time
// from the first request sent to the last reply taken; bytes are what the
// requests moved; the CPU, calls and wake-ups are the change in the
// load's and the server's counters across the measurement, polled with
// the load paused and drained before and after. other is what other
// processes kept busy meanwhile (nil where not measured). No change to
// the side can come in between (s.change is held throughout).
func (p *Pair) MeasureRequests(i int, requests int64, limit time.Duration) (f model.Figures, other *model.Figure, err error) {
	s := p.sides[i]
	s.change.Lock()
	defer s.change.Unlock()
	if p.stopped.Load() {
		return f, nil, errRunEnded
	}
	srv, _ := s.children()
	ld := s.runningLoad()
	if ld == nil {
		return f, nil, fmt.Errorf("side %s is down", s.name)
	}
	const pollWait = 10 * time.Second
	p.refreshFill(s)
	lm0, sm0, err := pollBoth(ld, srv, pollWait)
	p.takeFill(s) // from here on the window is the measurement's
	if err != nil {
		return f, nil, err
	}
	mach0, ok0 := ReadMachine()
	reply, err := ld.call(wire.Cmd{Op: wire.OpMeasure, Requests: requests, LimitMs: limit.Milliseconds()}, limit+pollWait)
	if err != nil {
		return f, nil, err
	}
	m := reply.Measured
	if m == nil {
		return f, nil, errors.New("the load's answer to a measurement carried no figures")
	}
	lm1, sm1, err := pollBoth(ld, srv, pollWait)
	if err != nil {
		return f, nil, err
	}
	mach1, ok1 := ReadMachine()
	if m.Errors > 0 {
		return f, nil, fmt.Errorf("%d of the measurement's %d requests failed: %s", m.Errors, requests, m.LastErr)
	}
	secs := float64(m.WallNs) / 1e9
	d := meter.Delta{Fill: p.takeFill(s), Bytes: m.Bytes, Active: secs, Client: lm1.Counters.Sub(lm0.Counters), Hist: model.HistDiff(lm1.Hist, lm0.Hist), MaxLat: m.MaxLatNs}
	if srv != nil {
		d.Server = sm1.Counters.Sub(sm0.Counters)
	}
	f = d.Figures(secs, srv != nil)
	s.mu.Lock()
	f.Settings = s.stampOf(s.cfg)
	f.Placement = s.placement()
	f.SndBuf = s.buffers(f.Settings, readingOf(time.Now(), lm1, sm1), srv != nil)
	s.mu.Unlock()
	if ok0 && ok1 {
		children := cpuOf(&f.Client)
		if f.Server != nil {
			children += cpuOf(f.Server)
		}
		other = OthersBetween(mach0, mach1, children)
	}
	return f, other, nil
}
