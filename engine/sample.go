package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"nbdscope/engine/meter"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// pollSide asks a side's children for their counters and, when emit is
// set, turns the difference since the last poll into a Sample.
func (p *Pair) pollSide(s *side, emit bool) {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	p.sampleSide(s, p.readSide(s), emit)
}

// sideRead is one poll of a side's children: what they said, and when.
type sideRead struct {
	ok      bool // the side is up and its children answered
	ld, srv *child
	sc      model.SideConfig
	lm, sm  wire.Msg
	now     time.Time
	// ran: the load's active clock moved since the side's last read, or
	// the side is up and did not answer (it may have run).
	ran bool
}

// readSide finds the side's data sockets for its fill, then reads its
// children for a sample.
func (p *Pair) readSide(s *side) sideRead {
	return p.readChildren(s, true)
}

// readChildren polls a side's load and server at once; fill: the fill
// sampler's sockets are looked up first, as a sample needs.
func (p *Pair) readChildren(s *side, fill bool) sideRead {
	s.mu.Lock()
	if s.down || s.load == nil {
		s.mu.Unlock()
		return sideRead{}
	}
	r := sideRead{ld: s.load, srv: s.server, sc: s.cfg}
	interval := p.cfg.Interval.D()
	s.mu.Unlock()

	if fill {
		p.refreshFill(s)
	}
	var err error
	r.lm, r.sm, err = pollBoth(r.ld, r.srv, max(4*interval, 2*time.Second))
	r.now = time.Now()
	if err != nil {
		r.ran = true // a crash is reported by watch; a slow child skips a sample
		return r
	}
	r.ok = true
	if fill {
		p.noteReplies(s, r.ld, r.srv, r.lm, r.sm)
	}
	s.mu.Lock()
	r.ran = s.readLoad != r.ld || r.lm.ActiveNs != s.readActive
	s.readLoad, s.readActive = r.ld, r.lm.ActiveNs
	s.mu.Unlock()
	return r
}

// readingOf is a poll's replies as the meter takes them.
func readingOf(now time.Time, lm, sm wire.Msg) meter.Reading {
	r := meter.Reading{At: now,
		Load: meter.Load{Counters: lm.Counters, Bytes: lm.Bytes, ActiveNs: lm.ActiveNs, Warming: lm.Warming, Hist: lm.Hist,
			MaxLatNs: lm.MaxLatNs, Consumed: lm.Consumed, Errors: lm.Errors, Conns: lm.Conns,
			Bufs: meter.Bufs{Snd: lm.SndBuf, Rcv: lm.RcvBuf, OwnSnd: lm.OwnSndBuf, OwnRcv: lm.OwnRcvBuf}},
		Server: meter.Server{Counters: sm.Counters, Payload: sm.Payload,
			Bufs: meter.Bufs{Snd: sm.SndBuf, Rcv: sm.RcvBuf, OwnSnd: sm.OwnSndBuf, OwnRcv: sm.OwnRcvBuf}},
	}
	if c := lm.ClockCPU; c != nil {
		r.Load.ClockCPU = &meter.CPU{UserS: c.UserS, SysS: c.SysS}
	}
	return r
}

// sampleSide turns a read into a Sample, emitted when emit is set.
func (p *Pair) sampleSide(s *side, r sideRead, emit bool) {
	if !r.ok {
		return
	}
	ld, srv, sc, lm, sm, now := r.ld, r.srv, r.sc, r.lm, r.sm, r.now
	interval := p.cfg.Interval.D()
	defer p.emitExecRuns(sc, now, lm)
	s.assumePayload(sc, lm, &sm)
	if sc.Exec != "" {
		s.noteExec(ld, lm, sm)
	}
	rd := readingOf(now, lm, sm)
	shared := p.sharesTargetServer(s)
	s.mu.Lock()
	if !s.meter.Started() || s.load != ld {
		s.meter.Begin(rd, s.stampOf(s.cfg))
		s.mu.Unlock()
		p.takeFill(s) // the window starts with the first sample's interval
		if srv != nil && sc.SndBuf.Kind != model.BufDefault {
			s.checkClamp(model.SetSndBuf, nbd.SendBuf, model.BufRequest(sc.SndBuf), sm.SndBuf)
		}
		return
	}
	idle, tell := s.countIdle(ld, lm, sm)
	if tell {
		tellIdle(ld, idle)
	}
	if emit && s.meter.Wall(rd) < interval.Seconds()/2 {
		// A tick that came right after a late one: fold this short span
		// into the next sample rather than report a noisy sliver.
		s.meter.Fold(rd)
		s.mu.Unlock()
		return
	}
	smp := s.meter.Sample(rd, s.span(p.clock(now).Seconds(), rd, srv != nil, shared, p.takeFill(s)))
	s.mu.Unlock()
	s.assumedRate(sc, &smp)
	if emit {
		p.warnFill(s, &smp)
		p.warnRequests(s, &smp, lm.LastErr)
		p.warnUnattributed(&smp)
		p.emit(model.Update{Sample: &smp})
	}
}

// span is what the side knows of a sample at the reading r, t seconds
// into the run, beside the readings: the meter's Span. s.mu is held.
func (s *side) span(t float64, r meter.Reading, hasServer, shared bool, fill model.Fill) meter.Span {
	stamp := s.stampOf(s.cfg)
	return meter.Span{T: t, Side: s.id, Stamp: stamp, Placement: s.placement(), Buffers: s.buffers(stamp, r, hasServer),
		TargetServer: s.targetServer(), Exec: s.cfg.Exec != "", ExecCounted: s.execCounted,
		HasServer: hasServer, Shared: shared, Fill: fill}
}

// warnRequests says, once per side, that its requests fail, with the
// last failure's text: the figures count only the requests that did not
// (writes to a read-only export acknowledge nothing: 0 B/s), and the
// errors count alone did not say why.
func (p *Pair) warnRequests(s *side, smp *model.Sample, lastErr string) {
	if smp.ErrorCount() == 0 {
		return
	}
	s.errsWarned.Do(func() {
		if lastErr == "" {
			lastErr = "no reason given"
		}
		p.raise(model.Warn(s.id, model.RequestsFailed{Count: int(smp.ErrorCount()), Seconds: smp.Seconds, LastErr: lastErr}))
	})
}

// pollBoth polls a side's load and server (nil: an external target) at
// once, so their counters cover the same span.
func pollBoth(ld, srv *child, timeout time.Duration) (lm, sm wire.Msg, err error) {
	var lerr, serr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); lm, lerr = ld.call(wire.Cmd{Op: "poll"}, timeout) }()
	if srv != nil {
		wg.Add(1)
		go func() { defer wg.Done(); sm, serr = srv.call(wire.Cmd{Op: "poll"}, timeout) }()
	}
	wg.Wait()
	if lerr != nil {
		return lm, sm, lerr
	}
	return lm, sm, serr
}

// buffers are the side's socket buffers, as requested (stamp) and as the
// children's poll replies say the kernel gave them. s.mu is held.
func (s *side) buffers(stamp model.Stamp, r meter.Reading, hasServer bool) model.Buffers {
	l, sv := r.Load.Bufs, r.Server.Bufs
	b := model.Buffers{
		ServerRequested:    stamp.SndBuf,
		ClientRequested:    stamp.ClientSndBuf,
		ClientEffective:    l.Snd,
		ClientRcvRequested: stamp.ClientRcvBuf,
		ClientRcvEffective: l.Rcv,
		ClientOwn:          l.OwnSnd,
		ClientRcvOwn:       l.OwnRcv,
	}
	b.ClientClamped, b.ClientRcvClamped = s.clamped(b.ClientRequested, l.Snd), s.clamped(b.ClientRcvRequested, l.Rcv)
	if hasServer {
		b.ServerEffective, b.ServerOwn = sv.Snd, sv.OwnSnd
		b.ServerRcvRequested, b.ServerRcvEffective, b.ServerRcvOwn = s.cfg.ServerRcvBuf.String(), sv.Rcv, sv.OwnRcv
		if r := model.BufRequest(s.cfg.SndBuf); r > 0 && sv.Snd > 0 {
			b.Clamped = s.p.limit().Clamped(r, sv.Snd)
		}
		b.ServerRcvClamped = s.clamped(b.ServerRcvRequested, sv.Rcv)
	}
	return b
}

// clamped tells whether the kernel gave a buffer requested as req (a
// size the user asked for; default and macos are not) less than the
// request should give, by the platform's rule (platform.Limit.Clamped).
func (s *side) clamped(req string, eff int) bool {
	b, err := model.ParseBuf(req)
	if err != nil || b.Kind != model.BufSize || eff <= 0 {
		return false
	}
	return s.p.limit().Clamped(b.Bytes, eff)
}

// summary is a side's figures over the whole run (active time only),
// stamped with the settings at its end; Changed when they changed.
func (p *Pair) summary(i int) model.Summary {
	s := p.sides[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.cfg
	f, consumed, changed := s.meter.Summary(sc.Target == "" || s.server != nil, sc.Exec != "", s.execCounted)
	noPayload(sc, &f)
	sum := model.Summary{Figures: f, Consume: model.ConsumeMode(sc.Get(model.SetConsume)), Consumed: consumed}
	sum.Settings = s.stampOf(sc)
	sum.TargetServer = s.targetServer()
	sum.Changed = changed
	sum.Placement = s.placement()
	sum.PayloadAssumed = s.assumed.export > 0 // some of the run's payload, if not all
	last := s.meter.Last()
	l, sv := last.Load.Bufs, last.Server.Bufs
	sum.SndBuf = model.Buffers{
		ServerRequested:    sum.Settings.SndBuf,
		ServerEffective:    sv.Snd,
		ServerOwn:          sv.OwnSnd,
		ServerRcvRequested: sc.ServerRcvBuf.String(),
		ServerRcvEffective: sv.Rcv,
		ServerRcvOwn:       sv.OwnRcv,
		ClientRequested:    sum.Settings.ClientSndBuf,
		ClientEffective:    l.Snd,
		ClientRcvRequested: sum.Settings.ClientRcvBuf,
		ClientRcvEffective: l.Rcv,
		ClientOwn:          l.OwnSnd,
		ClientRcvOwn:       l.OwnRcv,
	}
	return sum
}

// segments are a side's summaries per stretch of unchanged settings, each
// with what the consume mode found in it.
func (p *Pair) segments(i int) []model.Segment {
	s := p.sides[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	segs := s.meter.Segments(s.cfg.Exec != "", s.execCounted)
	for i := range segs {
		noPayload(s.cfg, &segs[i].Summary.Figures)
		g := segs[i].Settings // its client and server: both real, and known to be
		segs[i].PayloadAssumed = g.Exec != "" && g.Server != "" && s.assumed.export > 0
	}
	return segs
}

// recorder keeps everything a run reported, for Report.
type recorder struct {
	p        *Pair
	mu       sync.Mutex
	samples  []model.Sample
	events   []model.Event
	crashes  []model.Crash
	warnings []model.Warning
	cfg0     model.Config
	t0       time.Time
	// stopped: why the run ended before its duration ("" if it did not).
	stopped string
	// failed: sides that ran and yet measured nothing (a real client
	// that moved no payload in the whole run), each in a sentence.
	failed []string
}

// fail notes a side that measured nothing: the run is partial.
func (r *recorder) fail(why string) {
	r.mu.Lock()
	r.failed = append(r.failed, why)
	r.mu.Unlock()
}

func newRecorder(p *Pair) *recorder { return &recorder{p: p, cfg0: p.cfg, t0: time.Now()} }

func (r *recorder) note(u model.Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case u.Sample != nil:
		smp := *u.Sample
		smp.Turn, smp.Recent = nil, nil // what the explorer shows now; a run's report holds none, and a run keeps every sample
		r.samples = append(r.samples, smp)
	case u.Event != nil:
		r.events = append(r.events, *u.Event)
	case u.Crash != nil:
		r.crashes = append(r.crashes, *u.Crash)
	case u.Warning != nil:
		r.warnings = append(r.warnings, *u.Warning)
	case u.Done != nil:
		// A run with a duration that ends by cancellation (a signal, Stop)
		// was cut short; one without a duration (the explorer) ends that
		// way by design.
		if d := r.cfg0.Duration.D(); u.Done.Err != nil && d > 0 {
			r.stopped = fmt.Sprintf("interrupted after %.1fs of %v", r.p.elapsed(), d)
		}
	}
}

// partial lists why the run is incomplete: each crash, then an early end.
func (r *recorder) partial() []string {
	var why []string
	for _, c := range r.crashes {
		why = append(why, c.Text())
	}
	why = append(why, r.failed...)
	if r.stopped != "" {
		why = append(why, r.stopped)
	}
	return why
}

func (r *recorder) report() model.Report {
	rep := model.Report{
		Version:  model.ReportVersion,
		Nbdscope: model.Version,
		Time:     r.t0.UTC().Truncate(time.Second),
		Platform: r.p.facts,
		Config:   r.cfg0,
	}
	for i := range r.p.sides {
		rep.Sides = append(rep.Sides, model.SideReport{Name: r.cfg0.Sides[i].Name, Summary: r.p.summary(i), Segments: r.p.segments(i)})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rep.Samples = append([]model.Sample{}, r.samples...)
	rep.OtherCoresBusy = r.p.mach.otherCoresBusy(rep.Samples)
	rep.Events = append([]model.Event{}, r.events...)
	rep.Crashes = append([]model.Crash(nil), r.crashes...)
	rep.Warnings = append([]model.Warning(nil), r.warnings...)
	if why := r.partial(); len(why) > 0 {
		rep.Partial, rep.PartialReason = true, strings.Join(why, "; ")
	}
	addSpreads(&rep)
	return rep
}
