package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"nbdscope/nbd"
)

// pollSide asks a side's children for their counters and, when emit is
// set, turns the difference since the last poll into a Sample.
func (p *Pair) pollSide(s *side, emit bool) {
	s.mu.Lock()
	if s.down || s.load == nil {
		s.mu.Unlock()
		return
	}
	ld, srv := s.load, s.server
	interval := p.cfg.Interval.D()
	sc := s.cfg
	s.mu.Unlock()

	timeout := max(4*interval, 2*time.Second)
	var lm, sm childMsg
	var lerr, serr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); lm, lerr = ld.call(childCmd{Op: "poll"}, timeout) }()
	if srv != nil {
		wg.Add(1)
		go func() { defer wg.Done(); sm, serr = srv.call(childCmd{Op: "poll"}, timeout) }()
	}
	wg.Wait()
	now := time.Now()
	if lerr != nil || serr != nil {
		return // a crash is reported by watch; a slow child skips a sample
	}

	s.mu.Lock()
	if !s.havePrev || s.load != ld {
		s.prevT, s.prevLoad, s.prevServer, s.havePrev = now, lm, sm, true
		s.mu.Unlock()
		if srv != nil && sc.SndBuf.Kind != BufDefault {
			s.checkClamp(SetSndBuf, nbd.SendBuf, bufRequest(sc.SndBuf), sm.SndBuf)
		}
		return
	}
	wall := now.Sub(s.prevT).Seconds()
	if emit && wall < interval.Seconds()/2 {
		// A tick that came right after a late one: fold this short span
		// into the next sample rather than report a noisy sliver.
		s.mu.Unlock()
		return
	}
	bytes := lm.Bytes - s.prevLoad.Bytes
	active := float64(lm.ActiveNs-s.prevLoad.ActiveNs) / 1e9
	cd := lm.Counters.Sub(s.prevLoad.Counters)
	hd := histDiff(lm.Hist, s.prevLoad.Hist)
	// A sample counts as active when the load ran for at least a quarter
	// of it: the interval after an alternate-mode turn holds only the
	// drain of the requests in flight, whose figures mean little. Cores
	// busy are per second of load, so alternate and concurrent agree.
	isActive := active > 0 && active >= wall/4
	busyBase := wall
	if isActive {
		busyBase = active
	}
	smp := Sample{
		T:             now.Sub(p.start).Seconds(),
		Side:          s.name,
		Active:        isActive,
		Seconds:       active,
		Bytes:         bytes,
		ThroughputBps: Throughput(bytes, active),
		Client:        ProcessFigures(cd, bytes, busyBase),
		LatencyP50Ms:  Percentile(hd, 50),
		LatencyP99Ms:  Percentile(hd, 99),
		Connections:   lm.Conns,
		Errors:        lm.Errors - s.prevLoad.Errors,
		Placement:     s.placement(),
	}
	smp.SndBuf = Buffers{
		ServerRequested:    sc.SndBuf.String(),
		ClientRequested:    sc.ClientSndBuf.String(),
		ClientEffective:    lm.SndBuf,
		ClientRcvRequested: sc.ClientRcvBuf.String(),
		ClientRcvEffective: lm.RcvBuf,
	}
	t := &s.tot
	t.bytes += bytes
	t.active += active
	t.wall += active // cores busy over the run are per second of load
	t.client = addCounters(t.client, cd)
	t.hist = histAdd(t.hist, hd)
	t.errors += smp.Errors
	t.consumed.add(lm.Consumed, s.prevLoad.Consumed)
	smp.RootDigest = passRoot(lm.Consumed, s.prevLoad.Consumed)
	if srv != nil {
		sd := sm.Counters.Sub(s.prevServer.Counters)
		sp := ProcessFigures(sd, bytes, busyBase)
		smp.Server = &sp
		smp.SndBuf.ServerEffective = sm.SndBuf
		if r := bufRequest(sc.SndBuf); r > 0 && sm.SndBuf > 0 {
			smp.SndBuf.Clamped = p.limit().Clamped(r, sm.SndBuf)
		}
		t.server = addCounters(t.server, sd)
	} else {
		smp.SndBuf.ServerRequested = "external"
	}
	s.prevT, s.prevLoad, s.prevServer = now, lm, sm
	s.mu.Unlock()
	if emit {
		p.emit(Update{Sample: &smp})
	}
}

func addCounters(a, b Counters) Counters {
	return Counters{IO: a.IO.Add(b.IO), UserS: a.UserS + b.UserS, SysS: a.SysS + b.SysS}
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

// summary is a side's figures over the whole run (active time only).
func (p *Pair) summary(i int) Summary {
	s := p.sides[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.cfg
	t := s.tot
	sum := Summary{
		Bytes:         t.bytes,
		Seconds:       t.active,
		ThroughputBps: Throughput(t.bytes, t.active),
		Client:        ProcessFigures(t.client, t.bytes, t.wall),
		LatencyP50Ms:  Percentile(t.hist, 50),
		LatencyP99Ms:  Percentile(t.hist, 99),
		Errors:        t.errors,
		Placement:     s.placement(),
		Consume:       sc.Get(SetConsume),
		Consumed:      t.consumed,
		SndBuf: Buffers{
			ServerRequested:    sc.SndBuf.String(),
			ServerEffective:    s.prevServer.SndBuf,
			ClientRequested:    sc.ClientSndBuf.String(),
			ClientEffective:    s.prevLoad.SndBuf,
			ClientRcvRequested: sc.ClientRcvBuf.String(),
			ClientRcvEffective: s.prevLoad.RcvBuf,
		},
	}
	if sc.Target == "" {
		sp := ProcessFigures(t.server, t.bytes, t.wall)
		sum.Server = &sp
	} else {
		sum.SndBuf.ServerRequested = "external"
	}
	return sum
}

// recorder keeps everything a run reported, for Report.
type recorder struct {
	p        *Pair
	mu       sync.Mutex
	samples  []Sample
	events   []Event
	crashes  []Crash
	warnings []Warning
	cfg0     Config
	t0       time.Time
	// stopped: why the run ended before its duration ("" if it did not).
	stopped string
}

func newRecorder(p *Pair) *recorder { return &recorder{p: p, cfg0: p.cfg, t0: time.Now()} }

func (r *recorder) note(u Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case u.Sample != nil:
		r.samples = append(r.samples, *u.Sample)
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
			r.stopped = fmt.Sprintf("interrupted after %.1fs of %v", time.Since(r.p.start).Seconds(), d)
		}
	}
}

// partial lists why the run is incomplete: each crash, then an early end.
func (r *recorder) partial() []string {
	var why []string
	for _, c := range r.crashes {
		why = append(why, c.Text())
	}
	if r.stopped != "" {
		why = append(why, r.stopped)
	}
	return why
}

func (r *recorder) report() Report {
	rep := Report{
		Version:  ReportVersion,
		Nbdscope: Version,
		Time:     r.t0.UTC().Truncate(time.Second),
		Platform: r.p.facts,
		Config:   r.cfg0,
	}
	for i := range r.p.sides {
		rep.Sides = append(rep.Sides, SideReport{Name: r.cfg0.Sides[i].Name, Summary: r.p.summary(i)})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rep.Samples = append([]Sample{}, r.samples...)
	rep.Events = append([]Event{}, r.events...)
	rep.Crashes = append([]Crash(nil), r.crashes...)
	rep.Warnings = append([]Warning(nil), r.warnings...)
	if why := r.partial(); len(why) > 0 {
		rep.Partial, rep.PartialReason = true, strings.Join(why, "; ")
	}
	return rep
}
