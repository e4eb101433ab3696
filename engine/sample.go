package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"

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
	s.mu.Lock()
	r.ran = s.readLoad != r.ld || r.lm.ActiveNs != s.readActive
	s.readLoad, s.readActive = r.ld, r.lm.ActiveNs
	s.mu.Unlock()
	return r
}

// sampleSide turns a read into a Sample, emitted when emit is set.
func (p *Pair) sampleSide(s *side, r sideRead, emit bool) {
	if !r.ok {
		return
	}
	ld, srv, sc, lm, sm, now := r.ld, r.srv, r.sc, r.lm, r.sm, r.now
	interval := p.cfg.Interval.D()
	defer p.emitExecRuns(sc, now, lm.ExecRuns)
	if sc.Exec != "" {
		s.noteExec(ld, lm, sm)
	}

	shared := p.sharesTargetServer(s)
	s.mu.Lock()
	if !s.havePrev || s.load != ld {
		s.prevT, s.prevLoad, s.prevServer, s.havePrev = now, lm, sm, true
		s.prevStamp = s.stampOf(s.cfg)
		s.otherRan, s.pendServer, s.pendUnknown = false, model.Counters{}, false
		s.cutServer, s.cutActive = sm.Counters, lm.ActiveNs
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
	wall := now.Sub(s.prevT).Seconds()
	if emit && wall < interval.Seconds()/2 {
		// A tick that came right after a late one: fold this short span
		// into the next sample rather than report a noisy sliver. The
		// child's longest request is since this poll, so keep it.
		s.tot.pendLat = max(s.tot.pendLat, lm.MaxLatNs)
		s.mu.Unlock()
		return
	}
	smp := s.measure(p.clock(now).Seconds(), wall, lm, sm, srv != nil, shared, p.takeFill(s))
	s.prevT, s.prevLoad, s.prevServer = now, lm, sm
	s.mu.Unlock()
	if emit {
		p.warnFill(s, &smp)
		p.warnRequests(s, &smp, lm.LastErr)
		p.warnUnattributed(&smp)
		p.emit(model.Update{Sample: &smp})
	}
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
		p.warn(s.id, model.WarnRequests, fmt.Sprintf("side %s: %d requests failed in the last %.2f s (the figures count only those that did not): %s",
			s.name, smp.ErrorCount(), smp.Seconds, lastErr), "")
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

// measure turns the counters since the last poll into a Sample, stamped
// with the settings in force now, and adds it to the run's and the
// segment's totals. shared says the side's server is a --target process
// that serves the other side too: its counts are the side's only where
// the other's load did not run (shared.go). s.mu is held.
func (s *side) measure(t, wall float64, lm, sm wire.Msg, hasServer, shared bool, fill model.Fill) model.Sample {
	stamp := s.stampOf(s.cfg)
	d := delta{fill: fill}
	d.bytes = lm.Bytes - s.prevLoad.Bytes
	if s.cfg.Exec != "" {
		d.bytes = execPayload(sm, s.prevServer) // the client's own count is not ours: the server's
		d.unseen = true                         // nor are its requests, nor their failures
	}
	d.active = float64(lm.ActiveNs-s.prevLoad.ActiveNs) / 1e9
	d.client = lm.Counters.Sub(s.prevLoad.Counters)
	d.hist = model.HistDiff(lm.Hist, s.prevLoad.Hist)
	d.errors = lm.Errors - s.prevLoad.Errors
	d.maxLat = max(s.tot.pendLat, lm.MaxLatNs)
	s.tot.pendLat = 0
	// A sample counts as active when the load ran for at least a quarter
	// of it: the interval after an alternate-mode turn holds only the
	// drain of the requests in flight, whose figures mean little. Cores
	// busy are per second of load, so alternate and concurrent agree.
	isActive := d.active > 0 && d.active >= wall/4
	busyBase := wall
	if isActive {
		busyBase = d.active
	}
	if hasServer {
		d.server, d.srvUnknown = s.takeServer(sm.Counters, lm.ActiveNs, shared)
	}
	smp := model.Sample{T: t, Side: s.id, Active: isActive, Warming: lm.Warming, Connections: lm.Conns}
	smp.Figures = d.figures(busyBase, hasServer)
	execClient(s.cfg, s.execCounted, &smp.Figures)
	smp.Settings = stamp
	smp.Changed = stamp != s.prevStamp
	smp.Placement = s.placement()
	smp.SndBuf = s.buffers(stamp, lm, sm, hasServer)
	smp.TargetServer = s.targetServer()
	if d.active < fillSteady*wall {
		// A paused or off-turn stretch's buffer is empty because nothing
		// ran: the sample says so, the run's and segment's shares count
		// only intervals the load ran throughout.
		d.fill = model.Fill{}
	}
	s.tot.add(d)
	s.tot.consumed.AddBetween(lm.Consumed, s.prevLoad.Consumed)
	s.addToTurn(d, isActive || lm.Warming, smp.Changed)
	smp.Turn = s.turnFigures(smp.Figures, hasServer)
	smp.RootDigest = model.PassRoot(lm.Consumed, s.prevLoad.Consumed)
	if !smp.Changed {
		seg := s.segment(stamp, t-wall, t, smp)
		seg.add(d)
		seg.consumed.AddBetween(lm.Consumed, s.prevLoad.Consumed)
	}
	s.prevStamp = stamp
	return smp
}

// buffers are the side's socket buffers, as requested (stamp) and as the
// children's poll replies say the kernel gave them. s.mu is held.
func (s *side) buffers(stamp model.Stamp, lm, sm wire.Msg, hasServer bool) model.Buffers {
	b := model.Buffers{
		ServerRequested:    stamp.SndBuf,
		ClientRequested:    stamp.ClientSndBuf,
		ClientEffective:    lm.SndBuf,
		ClientRcvRequested: stamp.ClientRcvBuf,
		ClientRcvEffective: lm.RcvBuf,
		ClientOwn:          lm.OwnSndBuf,
		ClientRcvOwn:       lm.OwnRcvBuf,
	}
	if hasServer {
		b.ServerEffective, b.ServerOwn = sm.SndBuf, sm.OwnSndBuf
		b.ServerRcvRequested, b.ServerRcvEffective, b.ServerRcvOwn = s.cfg.ServerRcvBuf.String(), sm.RcvBuf, sm.OwnRcvBuf
		if r := model.BufRequest(s.cfg.SndBuf); r > 0 && sm.SndBuf > 0 {
			b.Clamped = s.p.limit().Clamped(r, sm.SndBuf)
		}
	}
	return b
}

// delta is what one interval added to a side's totals.
type delta struct {
	bytes          uint64
	active         float64
	client, server model.Counters
	hist           []uint64
	errors         uint64
	unseen         bool  // the requests (and errors) are a real client's, not seen
	srvUnknown     bool  // the server's counts are not attributed (shared.go): server is zero
	maxLat         int64 // ns: the longest request completed
	fill           model.Fill
}

// figures are the figures of an interval, with CPU per second of busy.
func (d delta) figures(busy float64, hasServer bool) model.Figures {
	f := model.Figures{
		Seconds:       d.active,
		Bytes:         d.bytes,
		ThroughputBps: model.Throughput(d.bytes, d.active),
		Client:        model.ProcessFigures(d.client, d.bytes, busy),
		LatencyP50Ms:  model.Percentile(d.hist, 50),
		LatencyP99Ms:  model.Percentile(d.hist, 99),
		LatencyMaxMs:  latencyMs(d.maxLat),
	}
	if !d.unseen {
		errs := d.errors
		f.Errors = &errs
	}
	f.SetFill(d.fill)
	if hasServer {
		bytes, secs, unattributed := d.bytes, d.active, 0
		if d.srvUnknown {
			bytes, secs, unattributed = 0, 0, 1
		}
		f.SetServerSpan(d.server, bytes, secs, busy, unattributed)
	}
	return f
}

// add accumulates an interval; cores busy over a span are per second of
// load.
func (t *totals) add(d delta) {
	t.bytes += d.bytes
	t.active += d.active
	t.client = t.client.Add(d.client)
	t.server = t.server.Add(d.server)
	if d.srvUnknown {
		t.srvUnattributed++
	} else {
		t.srvBytes += d.bytes
		t.srvActive += d.active
	}
	t.hist = histAdd(t.hist, d.hist)
	t.errors += d.errors
	t.seen = t.seen || !d.unseen
	t.maxLat = max(t.maxLat, d.maxLat)
	t.fill = t.fill.Add(d.fill)
}

// figures are the figures of a span's totals; the server's are over the
// samples whose server counts were attributed, with their payload.
func (t totals) figures(hasServer bool) model.Figures {
	f := delta{bytes: t.bytes, active: t.active, client: t.client,
		hist: t.hist, errors: t.errors, unseen: !t.seen, maxLat: t.maxLat, fill: t.fill}.figures(t.active, false)
	if hasServer {
		f.SetServerSpan(t.server, t.srvBytes, t.srvActive, t.srvActive, t.srvUnattributed)
	}
	return f
}

// consumedCounts are what the consume modes found over the span, nil
// where our load never ran in it (its requests all a real client's).
func (t totals) consumedCounts() *model.ConsumeCounts {
	if !t.seen {
		return nil
	}
	c := t.consumed
	return &c
}

// segTotals accumulate one stretch of unchanged settings.
type segTotals struct {
	stamp     model.Stamp
	from, to  float64
	tot       totals
	buf       model.Buffers
	placement model.Placement
	hasServer bool
}

// segment returns the totals of the segment a sample stamped st falls in:
// the last one if it has the same stamp, else a new one. s.mu is held.
func (s *side) segment(st model.Stamp, from, to float64, smp model.Sample) *totals {
	n := len(s.segs)
	if n == 0 || s.segs[n-1].stamp != st {
		s.segs = append(s.segs, segTotals{stamp: st, from: from})
		n++
	}
	g := &s.segs[n-1]
	g.to, g.buf, g.placement, g.hasServer = to, smp.SndBuf, smp.Placement, smp.Server != nil || smp.ServerNA != ""
	return &g.tot
}

// latencyMs is a longest request in ms; Unknown when none completed.
func latencyMs(ns int64) model.Figure {
	if ns <= 0 {
		return model.Unknown
	}
	return model.Figure(float64(ns) / 1e6)
}

func histAdd(a, b []uint64) []uint64 {
	if len(a) < len(b) {
		a = append(a, make([]uint64, len(b)-len(a))...)
	}
	for i := range b {
		a[i] += b[i]
	}
	return a
}

// summary is a side's figures over the whole run (active time only),
// stamped with the settings at its end; Changed when they changed.
func (p *Pair) summary(i int) model.Summary {
	s := p.sides[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.cfg
	t := s.tot
	sum := model.Summary{Figures: t.figures(sc.Target == "" || s.server != nil), Consume: model.ConsumeMode(sc.Get(model.SetConsume)), Consumed: t.consumedCounts()}
	execClient(sc, s.execCounted, &sum.Figures)
	noPayload(sc, t, &sum.Figures)
	sum.Settings = s.stampOf(sc)
	sum.TargetServer = s.targetServer()
	sum.Changed = len(s.segs) > 1
	sum.Placement = s.placement()
	sum.SndBuf = model.Buffers{
		ServerRequested:    sum.Settings.SndBuf,
		ServerEffective:    s.prevServer.SndBuf,
		ServerOwn:          s.prevServer.OwnSndBuf,
		ServerRcvRequested: sc.ServerRcvBuf.String(),
		ServerRcvEffective: s.prevServer.RcvBuf,
		ServerRcvOwn:       s.prevServer.OwnRcvBuf,
		ClientRequested:    sum.Settings.ClientSndBuf,
		ClientEffective:    s.prevLoad.SndBuf,
		ClientRcvRequested: sum.Settings.ClientRcvBuf,
		ClientRcvEffective: s.prevLoad.RcvBuf,
		ClientOwn:          s.prevLoad.OwnSndBuf,
		ClientRcvOwn:       s.prevLoad.OwnRcvBuf,
	}
	return sum
}

// segments are a side's summaries per stretch of unchanged settings, each
// with what the consume mode found in it.
func (p *Pair) segments(i int) []model.Segment {
	s := p.sides[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []model.Segment
	for _, g := range s.segs {
		sum := model.Summary{Figures: g.tot.figures(g.hasServer), Consume: g.stamp.Consume, Consumed: g.tot.consumedCounts()}
		execClient(s.cfg, s.execCounted, &sum.Figures)
		noPayload(s.cfg, g.tot, &sum.Figures)
		sum.Settings, sum.SndBuf, sum.Placement = g.stamp, g.buf, g.placement
		out = append(out, model.Segment{From: g.from, To: g.to, Summary: sum})
	}
	return out
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
		smp.Turn = nil // what a waiting side shows now; a run's report holds none, and a run keeps every sample
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
