package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"nbdscope/engine/platform"
	"nbdscope/nbd"
	"nbdscope/units"
)

// Options tune how a Pair runs its children.
type Options struct {
	// Exe is the nbdscope binary to start children from; default: this
	// executable.
	Exe string
	// StartTimeout bounds the start of a child; default 10s.
	StartTimeout time.Duration
	// Facts, when set, skips probing the platform (tests).
	Facts *platform.Facts
}

// Pair runs two sides and implements Controller.
type Pair struct {
	opts  Options
	facts platform.Facts
	dir   string // private 0700 directory for unix sockets
	cpus  []int  // the CPUs this process may use, for placement

	mu      sync.Mutex
	cfg     Config
	sides   [2]*side
	paused  [2]bool // paused by the user
	turn    int     // alternate mode: the side whose turn it is
	turnAt  time.Time
	stopped bool

	start   time.Time
	updates chan Update
	cancel  context.CancelFunc
	loopEnd chan struct{}
	rec     *recorder
}

// side is one running side: its children and its counters.
type side struct {
	idx    int
	name   string
	server *child // nil for an external target
	load   *child
	uri    string
	down   bool // crashed or stopping; no polling

	prevT      time.Time
	prevLoad   childMsg
	prevServer childMsg
	havePrev   bool

	srvEff, cliSndEff, cliRcvEff int
	loadCPUs, serverCPUs         []int // where placeSide held the processes (nil: not held)
	clampWarned                  string
	tot                          totals
}

// totals accumulate a side over the whole run, across restarts.
type totals struct {
	bytes  uint64
	active float64
	wall   float64
	client Counters
	server Counters
	hist   []uint64
	errors uint64
	// consumed are the consume counts, added across load restarts.
	consumed ConsumeCounts
}

// Start runs cfg: spawns each side's server (unless it targets an external
// URI) and load process, and starts sampling.
func Start(ctx context.Context, cfg Config) (*Pair, error) {
	return StartWith(ctx, cfg, Options{})
}

// StartWith is Start with options.
func StartWith(ctx context.Context, cfg Config, opts Options) (*Pair, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding the nbdscope binary: %w", err)
		}
		opts.Exe = exe
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	p := &Pair{opts: opts, cfg: cfg, updates: make(chan Update, 1024), loopEnd: make(chan struct{})}
	if opts.Facts != nil {
		p.facts = *opts.Facts
	} else {
		p.facts = platform.Probe()
	}
	if err := checkRefusals(p.limit(), cfg); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nbdscope-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.dir = dir
	p.cpus = platform.AllowedCPUs()
	p.rec = newRecorder(p)
	p.start = time.Now()
	p.turnAt = p.start
	for i := range p.sides {
		p.sides[i] = &side{idx: i, name: cfg.Sides[i].Name}
		p.mu.Lock()
		w, err := p.startSide(i)
		p.mu.Unlock()
		if err != nil {
			p.shutdown()
			return nil, err
		}
		if w != "" {
			p.warn(cfg.Sides[i].Name, "placement", w, "")
		}
	}
	p.applyTurns(true)
	if cfg.Mode == ModeConcurrent && p.facts.Cores > 0 && p.facts.Cores < 4 {
		p.warn("", "cores", fmt.Sprintf("this machine has %d cores: in concurrent mode the sides compete for CPU; alternate mode is fairer", p.facts.Cores), "press m or use --mode alternate")
	}
	lctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	go p.loop(lctx)
	return p, nil
}

func (p *Pair) elapsed() float64 { return time.Since(p.start).Seconds() }

// bufRequest turns a Buf into a setsockopt request (0 = leave the default).
func bufRequest(b Buf) int {
	switch b.Kind {
	case BufSize:
		return b.Bytes
	case BufMacOS:
		return platform.MacOSRequest()
	}
	return 0
}

// startSide spawns the children of side i with the current configuration
// and places them; a placement problem comes back as a warning to emit.
func (p *Pair) startSide(i int) (warning string, err error) {
	s := p.sides[i]
	sc := p.cfg.Sides[i]
	s.server, s.load, s.down, s.havePrev = nil, nil, false, false
	s.uri = sc.Target
	if sc.Target == "" {
		spec := serverSpec{Backend: sc.Backend, Size: sc.Size, Transport: sc.Transport, SndBuf: bufRequest(sc.SndBuf)}
		if sc.Transport == "unix" {
			spec.Socket = filepath.Join(p.dir, fmt.Sprintf("%s.sock", sc.Name))
		}
		c, ready, err := spawn(p.opts.Exe, RoleServer, sc.Name, spec, p.opts.StartTimeout)
		if err != nil {
			return "", err
		}
		s.server = c
		s.uri = ready.URI
	}
	lspec := loadSpec{URI: s.uri, Connections: sc.Connections, RequestSize: sc.RequestSize, InFlight: sc.InFlight,
		Workload: sc.Workload, ReadPercent: sc.ReadPercent, SndBuf: bufRequest(sc.ClientSndBuf), RcvBuf: bufRequest(sc.ClientRcvBuf),
		Verify: sc.Verify, Consume: sc.Consume, HashThreads: ResolveHashThreads(sc, p.cfg.Mode, p.cpus), Paused: true}
	c, _, err := spawn(p.opts.Exe, RoleLoad, sc.Name, lspec, p.opts.StartTimeout)
	if err != nil {
		if s.server != nil {
			s.server.stop(2 * time.Second)
			s.server = nil
		}
		return "", err
	}
	s.load = c
	warning = p.placeSide(s)
	go p.watch(s, s.server)
	go p.watch(s, s.load)
	return warning, nil
}

// watch reports a child that exits while it should be running.
func (p *Pair) watch(s *side, c *child) {
	if c == nil {
		return
	}
	<-c.exited
	p.mu.Lock()
	if p.stopped || s.down || (s.server != c && s.load != c) {
		p.mu.Unlock()
		return
	}
	s.down = true
	other, uri := s.load, s.uri
	if c == s.load {
		other = s.server
	}
	p.mu.Unlock()
	p.emit(Update{Crash: p.crashOf(s.name, uri, c, other)})
	if other != nil {
		// A side is a server and its load together: without one the
		// other measures nothing. Stop it so a restart starts clean.
		other.stop(2 * time.Second)
	}
}

func (p *Pair) emit(u Update) {
	p.rec.note(u)
	defer func() { recover() }() // updates closed during shutdown
	p.updates <- u
}

func (p *Pair) warn(sideName, kind, text, fix string) {
	p.emit(Update{Warning: &Warning{T: p.elapsed(), Side: sideName, Kind: kind, Text: text, Fix: fix}})
}

// Config implements Controller.
func (p *Pair) Config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Facts implements Controller.
func (p *Pair) Facts() platform.Facts { return p.facts }

// Updates implements Controller.
func (p *Pair) Updates() <-chan Update { return p.updates }

// Elapsed implements Controller.
func (p *Pair) Elapsed() time.Duration { return time.Since(p.start) }

// Report returns the run so far.
func (p *Pair) Report() Report { return p.rec.report() }

// Apply implements Controller.
func (p *Pair) Apply(ch Change) error {
	if ch.Side < 0 || ch.Side > 1 {
		return fmt.Errorf("side %d: want 0 (A) or 1 (B)", ch.Side)
	}
	if ch.Setting == SetPaused {
		return p.SetPaused(ch.Side, ch.Value == "true")
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errors.New("the run has ended")
	}
	sc := p.cfg.Sides[ch.Side]
	from := sc.Get(ch.Setting)
	if err := sc.Set(ch.Setting, ch.Value); err != nil {
		p.mu.Unlock()
		return err
	}
	s := p.sides[ch.Side]
	to := sc.Get(ch.Setting)
	down := s.down
	p.mu.Unlock()
	if err := p.refusedChange(sc, ch.Setting); err != nil {
		return err
	}

	cmd := childCmd{Op: "set", Setting: ch.Setting, Value: ch.Value}
	var target *child
	switch ch.Setting {
	case SetSndBuf:
		if sc.Target != "" {
			return fmt.Errorf("side %s targets an external server (%s): its send buffer is not ours to set", sc.Name, sc.Target)
		}
		cmd.Int = bufRequest(sc.SndBuf)
		target = s.server
	case SetClientSndBuf:
		cmd.Int = bufRequest(sc.ClientSndBuf)
		target = s.load
	case SetClientRcvBuf:
		cmd.Int = bufRequest(sc.ClientRcvBuf)
		target = s.load
	case SetConnections:
		cmd.Int = sc.Connections
		target = s.load
	case SetRequestSize:
		cmd.Int = sc.RequestSize
		target = s.load
	case SetInFlight:
		cmd.Int = sc.InFlight
		target = s.load
	case SetWorkload, SetReadPercent, SetConsume:
		target = s.load
	case SetHashThreads:
		cmd.Int = ResolveHashThreads(sc, p.cfg.Mode, p.cpus)
		target = s.load
	case SetTransport:
		return p.restartWith(ch.Side, sc, ch.Setting, from, to)
	case SetPlacement:
		p.mu.Lock()
		p.cfg.Sides[ch.Side] = sc
		w := ""
		if !down {
			w = p.placeSide(s)
		}
		p.mu.Unlock()
		p.emit(Update{Event: &Event{T: p.elapsed(), Side: sc.Name, Setting: ch.Setting, From: from, To: to}})
		if w != "" {
			p.warn(sc.Name, "placement", w, "")
		}
		p.giveTurn(ch.Side)
		return nil
	}
	if down || target == nil {
		// Not running: the change applies at the next (re)start.
		p.mu.Lock()
		p.cfg.Sides[ch.Side] = sc
		p.mu.Unlock()
		p.emit(Update{Event: &Event{T: p.elapsed(), Side: sc.Name, Setting: ch.Setting, From: from, To: to}})
		return nil
	}
	m, err := target.call(cmd, 30*time.Second)
	if err != nil {
		return fmt.Errorf("side %s %s: %w", sc.Name, ch.Setting, err)
	}
	p.mu.Lock()
	p.cfg.Sides[ch.Side] = sc
	switch ch.Setting {
	case SetSndBuf:
		s.srvEff = m.Effective
	case SetClientSndBuf:
		s.cliSndEff = m.Effective
	case SetClientRcvBuf:
		s.cliRcvEff = m.Effective
	}
	p.mu.Unlock()
	p.emit(Update{Event: &Event{T: p.elapsed(), Side: sc.Name, Setting: ch.Setting, From: from, To: to}})
	p.giveTurn(ch.Side)
	if ch.Setting == SetSndBuf || ch.Setting == SetClientSndBuf || ch.Setting == SetClientRcvBuf {
		which := nbd.SendBuf
		if ch.Setting == SetClientRcvBuf {
			which = nbd.RecvBuf
		}
		p.checkClamp(s, ch.Setting, which, cmd.Int, m.Effective)
	}
	return nil
}

func (p *Pair) checkClamp(s *side, setting string, which nbd.SockBuf, req, eff int) {
	if req <= 0 || eff <= 0 {
		return
	}
	c, clamped := p.limit().Check(which, req, eff)
	if !clamped {
		return
	}
	p.warn(s.name, "clamp", fmt.Sprintf("%s %s: requested %s should give %s effective, the kernel gave %s: clamped by %s",
		s.name, setting, units.FormatSize(int64(req)), units.FormatSize(int64(p.limit().Expected(req))), units.FormatSize(int64(eff)), c.Limit), c.Fix+"  (persist: "+c.Persist+" in "+c.Where+")")
}

// restartWith restarts a side to apply a setting that needs new children.
func (p *Pair) restartWith(i int, sc SideConfig, setting, from, to string) error {
	p.mu.Lock()
	p.cfg.Sides[i] = sc
	p.mu.Unlock()
	if err := p.Restart(i); err != nil {
		return err
	}
	p.emit(Update{Event: &Event{T: p.elapsed(), Side: sc.Name, Setting: setting, From: from, To: to}})
	return nil
}

// SetMode implements Controller.
func (p *Pair) SetMode(mode string) error {
	if mode != ModeAlternate && mode != ModeConcurrent {
		return fmt.Errorf("mode %q: want alternate or concurrent", mode)
	}
	p.mu.Lock()
	from := p.cfg.Mode
	p.cfg.Mode = mode
	p.mu.Unlock()
	if from == mode {
		return nil
	}
	p.applyTurns(true)
	// Concurrent sides on four or more cores take cores of their own.
	var warns [2]string
	p.mu.Lock()
	for i, s := range p.sides {
		if !s.down {
			warns[i] = p.placeSide(s)
		}
	}
	p.mu.Unlock()
	p.emit(Update{Event: &Event{T: p.elapsed(), Side: "", Setting: "mode", From: from, To: mode}})
	for i, w := range warns {
		if w != "" {
			p.warn(p.sides[i].name, "placement", w, "")
		}
	}
	if mode == ModeConcurrent && p.facts.Cores > 0 && p.facts.Cores < 4 {
		p.warn("", "cores", fmt.Sprintf("this machine has %d cores: in concurrent mode the sides compete for CPU; alternate mode is fairer", p.facts.Cores), "press m or use --mode alternate")
	}
	return nil
}

// SetPaused implements Controller.
func (p *Pair) SetPaused(i int, paused bool) error {
	if i < 0 || i > 1 {
		return fmt.Errorf("side %d: want 0 (A) or 1 (B)", i)
	}
	p.mu.Lock()
	from := p.paused[i]
	p.paused[i] = paused
	p.mu.Unlock()
	if from == paused {
		return nil
	}
	p.applyTurns(true)
	p.emit(Update{Event: &Event{T: p.elapsed(), Side: p.sides[i].name, Setting: SetPaused, From: strconv.FormatBool(from), To: strconv.FormatBool(paused)}})
	return nil
}

// turnSlice is how long a side runs alone in alternate mode: long enough
// for several samples, short enough that both sides see the same machine.
func (p *Pair) turnSlice() time.Duration {
	return max(4*p.cfg.Interval.D(), time.Second)
}

// applyTurns pauses and resumes load processes for the mode, user pauses
// and (alternate) whose turn it is. force sends the state even if the
// turn did not change.
func (p *Pair) applyTurns(force bool) {
	p.mu.Lock()
	if p.cfg.Mode == ModeAlternate && time.Since(p.turnAt) >= p.turnSlice() {
		p.turn = 1 - p.turn
		p.turnAt = time.Now()
		force = true
	}
	if !force {
		p.mu.Unlock()
		return
	}
	want := [2]bool{}
	for i := range want {
		run := !p.paused[i]
		if p.cfg.Mode == ModeAlternate && i != p.turn {
			// The other side's turn, unless it is paused or down:
			// then this side may run rather than idle.
			o := p.sides[1-i]
			if !p.paused[1-i] && o != nil && !o.down {
				run = false
			}
		}
		want[i] = run
	}
	var loads [2]*child
	for i, s := range p.sides {
		if s != nil && !s.down {
			loads[i] = s.load
		}
	}
	p.mu.Unlock()
	// Pause first, then resume, so the sides never overlap.
	for _, phase := range []bool{false, true} {
		for i, c := range loads {
			if c != nil && want[i] == phase {
				c.call(childCmd{Op: "set", Setting: SetPaused, Value: strconv.FormatBool(!phase)}, 30*time.Second)
			}
		}
	}
}

// giveTurn starts a fresh alternate-mode turn for side i, so the effect of
// a change shows in the next sample instead of after the other side's turn.
func (p *Pair) giveTurn(i int) {
	p.mu.Lock()
	if p.cfg.Mode != ModeAlternate || p.stopped {
		p.mu.Unlock()
		return
	}
	p.turn = i
	p.turnAt = time.Now()
	p.mu.Unlock()
	p.applyTurns(true)
}

// Restart implements Controller.
func (p *Pair) Restart(i int) error {
	if i < 0 || i > 1 {
		return fmt.Errorf("side %d: want 0 (A) or 1 (B)", i)
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errors.New("the run has ended")
	}
	s := p.sides[i]
	s.down = true
	srv, ld := s.server, s.load
	p.mu.Unlock()
	if ld != nil {
		ld.stop(2 * time.Second)
	}
	if srv != nil {
		srv.stop(2 * time.Second)
	}
	p.mu.Lock()
	w, err := p.startSide(i)
	if err != nil {
		s.down = true
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if w != "" {
		p.warn(s.name, "placement", w, "")
	}
	p.applyTurns(true)
	return nil
}

// Stop implements Controller.
func (p *Pair) Stop() error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	if p.cancel != nil {
		p.cancel()
		<-p.loopEnd
	}
	p.shutdown()
	return nil
}

// shutdown stops every child and removes the socket directory.
func (p *Pair) shutdown() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	var kids []*child
	for _, s := range p.sides {
		if s == nil {
			continue
		}
		s.down = true
		if s.load != nil {
			kids = append(kids, s.load)
		}
		if s.server != nil {
			kids = append(kids, s.server)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range kids {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop(2 * time.Second) }()
	}
	wg.Wait()
	os.RemoveAll(p.dir)
}

// loop samples every interval, runs scripted changes and alternate turns,
// and ends the run after its duration.
func (p *Pair) loop(ctx context.Context) {
	defer close(p.loopEnd)
	defer func() {
		p.emit(Update{Done: &Done{Err: ctx.Err()}})
		p.mu.Lock()
		close(p.updates)
		p.mu.Unlock()
	}()
	p.mu.Lock()
	interval := p.cfg.Interval.D()
	dur := p.cfg.Duration.D()
	script := append([]Change(nil), p.cfg.Script...)
	p.mu.Unlock()
	// Baseline poll so the first sample covers one interval.
	for _, s := range p.sides {
		p.pollSide(s, false)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		el := time.Since(p.start)
		for len(script) > 0 && script[0].At.D() <= el {
			ch := script[0]
			script = script[1:]
			if err := p.Apply(ch); err != nil {
				p.warn(p.sides[ch.Side].name, "script", fmt.Sprintf("scripted change %v failed: %v", ch, err), "")
			}
		}
		var wg sync.WaitGroup
		for _, s := range p.sides {
			wg.Add(1)
			go func() { defer wg.Done(); p.pollSide(s, true) }()
		}
		wg.Wait()
		p.applyTurns(false)
		if dur > 0 && time.Since(p.start) >= dur {
			return
		}
	}
}
