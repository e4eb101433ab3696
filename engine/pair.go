package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"nbdscope/clientrun"
	"nbdscope/model"
	"nbdscope/platform"
	"nbdscope/probe/schedstat"
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
	// StartPaused starts both sides paused, as by SetPaused: nothing runs
	// but what the caller lets through (a sweep's measurements).
	StartPaused bool
}

// WithDefaults fills in what the caller left unset.
func (o Options) WithDefaults() (Options, error) {
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("finding the nbdscope binary: %w", err)
		}
		o.Exe = exe
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 10 * time.Second
	}
	return o, nil
}

// Pair runs two sides and implements Controller.
//
// Its state is split by owner, and no lock here is held across a spawn or
// a child call:
//   - each side (side.go) owns its configuration and children and
//     serialises its own changes;
//   - turns (turns.go) owns the mode, the user's pauses and whose turn it
//     is, and is the only one that pauses and resumes loads;
//   - the loop goroutine owns the updates channel (see emit);
//   - the fields from opts to start are set by Start and never change.
type Pair struct {
	opts      Options
	facts     platform.Facts
	dir       string       // private 0700 directory for unix sockets
	removeDir func()       // removes dir (clientrun.TempDir)
	cpus      []int        // the CPUs this process may use, for placement
	cfg       model.Config // as started; the live side configs are the sides', the mode is turns'
	// start is when the run's clock started: when the loads were released,
	// after every child had started. Duration, --at times and sample times
	// count from there, so they measure time under load, not the spawning
	// of processes (seconds on a loaded machine, which used to eat into a
	// short run and fire its scripted changes late). nil until then: the
	// clock reads 0 while the pair starts.
	start atomic.Pointer[time.Time]
	sides [2]*side
	turns *turns
	rec   *recorder
	mach  machineMeter // what other processes took meanwhile
	fill  fillMeter    // the sides' send-buffer fill (fill.go)

	stopped  atomic.Bool    // Stop began: no more changes, no more children
	watchers sync.WaitGroup // the sides' watch goroutines

	updates chan model.Update
	// ending is closed when no one is obliged to read updates any more:
	// Stop began or the loop is finishing. A send blocked on a full
	// channel gives up then. sendMu orders sends against the close: a
	// send holds it for reading, the close for writing, and closed says
	// the close happened.
	ending     chan struct{}
	endingOnce sync.Once
	sendMu     sync.RWMutex
	closed     bool

	cancel  context.CancelFunc
	loopEnd chan struct{}
	down    chan struct{} // closed once shutdown is done: every child stopped, the socket directory gone

	// unattributedWarned: the warning that a shared --target's calls in
	// a sample in which both loads ran are not attributed was given
	// (shared.go).
	unattributedWarned sync.Once
	// readMu orders the reads of the sides' children: a sample's poll
	// and a cut between turns (shared.go) never interleave, so each
	// side's counts are read in the order they are turned into figures.
	readMu sync.Mutex
	// holdProblems are why alternate mode cannot give a scripted change's
	// side a whole turn either side of it (planHolds), warned at the start.
	holdProblems []model.Warning
}

// Start runs cfg: spawns each side's server (unless it targets an external
// URI) and load process, and starts sampling.
func Start(ctx context.Context, cfg model.Config) (*Pair, error) {
	return StartWith(ctx, cfg, Options{})
}

// StartWith is Start with options.
func StartWith(ctx context.Context, cfg model.Config, opts Options) (*Pair, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := newPair(cfg, opts)
	if err != nil {
		return nil, err
	}
	for _, s := range p.sides {
		if err := s.start(); err != nil {
			p.shutdown()
			return nil, err
		}
	}
	now := time.Now()
	p.start.Store(&now)
	p.warnCores(cfg.Mode)
	p.warnSched()
	if cfg.Mode == model.ModeAlternate {
		for _, w := range p.holdProblems {
			p.raise(w)
		}
	}
	lctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	p.fill.start(lctx, cfg.FillSource())
	go p.loop(lctx)
	// The first resume waits for the side's buffers to warm (up to 5 s),
	// so it is not waited for here: the explorer draws and the samples go
	// on meanwhile, showing the sides not yet running. Every later
	// decision takes the same lock (turns.send), so none can be
	// overtaken by this one's stale view.
	go p.turns.apply(true)
	return p, nil
}

// newPair sets up a pair's state and socket directory; no child runs yet.
func newPair(cfg model.Config, opts Options) (*Pair, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pair{opts: opts, cfg: cfg, updates: make(chan model.Update, 1024), ending: make(chan struct{}), loopEnd: make(chan struct{}), down: make(chan struct{})}
	if opts.Facts != nil {
		p.facts = *opts.Facts
	} else {
		p.facts = platform.Probe()
	}
	if err := checkRefusals(p.limit(), cfg); err != nil {
		return nil, err
	}
	// Removed by shutdown, or by the janitor should this process die
	// without one (kill -9), or by the next start should both die.
	dir, removeDir, err := clientrun.TempDir("nbdscope-")
	if err != nil {
		return nil, err
	}
	p.dir, p.removeDir = dir, removeDir
	p.cpus = platform.AllowedCPUs()
	for i := range p.sides {
		p.sides[i] = newSide(p, i, cfg.Sides[i])
		p.cfg.Sides[i] = p.sides[i].fitExport() // the run's configuration says the export served
	}
	p.turns = newTurns(cfg.Mode, cfg.Interval.D(), p.sides, func(s *side, what model.WarningParams) { p.raise(model.Warn(s.id, what)) })
	p.turns.cut = p.cutTurns
	p.turns.holds, p.holdProblems = planHolds(cfg.Script, p.turns.slice, cfg.Interval.D(), cfg.Duration.D())
	p.turns.clock = p.clock
	p.turns.paused = [2]bool{opts.StartPaused, opts.StartPaused}
	p.rec = newRecorder(p)
	return p, nil
}

func (p *Pair) elapsed() float64 { return p.clock(time.Now()).Seconds() }

// clock is the run's time at now (see start).
func (p *Pair) clock(now time.Time) time.Duration {
	t0 := p.start.Load()
	if t0 == nil {
		return 0
	}
	return now.Sub(*t0)
}

// emit records an update and delivers it.
//
// The updates channel has one owner, the loop goroutine: only it closes
// the channel (closeUpdates, when it ends), and every other goroutine only
// sends, through emit. A send never races the close: it holds sendMu for
// reading and checks closed, and the close takes sendMu for writing. A
// full channel never blocks Stop: a send that finds it full waits for a
// reader or for ending, which Stop closes first, and the close closes
// ending before it waits for sendMu. An update not delivered that way (the
// run is ending and nobody reads) is still in the recorder, so Report has
// it.
func (p *Pair) emit(u model.Update) {
	if u.Sample != nil {
		p.settleSample(u.Sample)
	}
	p.rec.note(u)
	p.sendMu.RLock()
	defer p.sendMu.RUnlock()
	if p.closed {
		return
	}
	select {
	case p.updates <- u: // room: deliver even if the run is ending
		return
	default:
	}
	select {
	case p.updates <- u:
	case <-p.ending:
	}
}

// end closes ending: from now on a full channel drops updates.
func (p *Pair) end() { p.endingOnce.Do(func() { close(p.ending) }) }

// closeUpdates closes the updates channel. Only the loop calls it, once.
func (p *Pair) closeUpdates() {
	p.end()
	p.sendMu.Lock()
	p.closed = true
	close(p.updates)
	p.sendMu.Unlock()
}

// raise sends a warning, its kind and parameters: the phrasebook (package
// phrase) words it wherever it is shown.
func (p *Pair) raise(w model.Warning) {
	w.T = p.elapsed()
	p.emit(model.Update{Warning: &w})
}

// warnCores says when concurrent sides will compete for too few cores,
// or share one --target process whose counts cannot then be told apart.
func (p *Pair) warnCores(mode model.Mode) {
	if mode != model.ModeConcurrent {
		return
	}
	if p.facts.Cores > 0 && p.facts.Cores < 4 {
		p.raise(model.Warn(model.WholePair, model.FewCores{Cores: p.facts.Cores}))
	}
	if a := p.sides[0]; a != nil && p.sharesTargetServer(a) {
		p.raise(model.Warn(model.WholePair, model.TargetShared{}))
	}
}

// Config implements Controller.
func (p *Pair) Config() model.Config {
	c := p.cfg
	c.Mode = p.turns.Mode()
	for i, s := range p.sides {
		c.Sides[i] = s.config()
	}
	return c
}

// Facts implements Controller.
func (p *Pair) Facts() platform.Facts { return p.facts }

// Updates implements Controller.
func (p *Pair) Updates() <-chan model.Update { return p.updates }

// Elapsed implements Controller.
func (p *Pair) Elapsed() time.Duration { return p.clock(time.Now()) }

// Report returns the run so far.
func (p *Pair) Report() model.Report {
	rep := p.rec.report()
	rep.ControllerCoresBusy = p.mach.ownCoresBusy()
	rep.SettleFlows() // which process received the bulk data, span by span
	rep.MacOS = model.MacOSEmulationOf(rep)
	rep.BOverA = model.SidesDifferences(rep)
	p.labelFillSources(&rep)
	return rep
}

func checkSide(i int) error {
	if i < 0 || i > 1 {
		return fmt.Errorf("side %d: want 0 (A) or 1 (B)", i)
	}
	return nil
}

// Apply implements Controller: the side applies the change; pauses go to
// the turn-taking, which owns them.
func (p *Pair) Apply(ch model.Change) error {
	if err := checkSide(ch.Side); err != nil {
		return err
	}
	st := ch.Setting
	if st == nil {
		return fmt.Errorf("a change of no setting")
	}
	if set, ok := pairSetter(ch); ok {
		return set(p, ch.Side, ch.Value) // mode, paused: the turns own them
	}
	live, err := p.sides[ch.Side].apply(st, ch.Value)
	if err == nil && live {
		p.turns.give(ch.Side)
	}
	return err
}

// SetMode implements Controller.
func (p *Pair) SetMode(mode model.Mode) error {
	if mode != model.ModeAlternate && mode != model.ModeConcurrent {
		return fmt.Errorf("mode %q: want alternate or concurrent", mode)
	}
	from := p.turns.setMode(mode)
	if from == mode {
		p.emitNoOp(model.WholePair, model.SetMode, string(mode), model.Value{Str: string(mode)})
		return nil
	}
	// Concurrent sides on four or more cores take cores of their own.
	for _, s := range p.sides {
		s.change.Lock()
		if s.runningLoad() != nil {
			s.reseat(mode)
		}
		s.change.Unlock()
	}
	p.emit(model.Update{Event: &model.Event{T: p.elapsed(), Side: model.WholePair, Setting: model.SetMode, From: string(from), To: string(mode), Value: model.Value{Str: string(mode)}}})
	p.warnCores(mode)
	return nil
}

// emitNoOp reports a change of a pair setting to the value in force (a
// script's; the explorer's keys send none): its event, marked, and the
// warning.
func (p *Pair) emitNoOp(side model.SideID, setting, value string, v model.Value) {
	t := p.elapsed()
	p.emit(model.Update{Event: &model.Event{T: t, Side: side, Setting: setting, From: value, To: value, Value: v, NoOp: true}})
	p.raise(model.Warn(side, model.NoOpChange{Setting: setting, Value: value}))
}

// SetPaused implements Controller.
func (p *Pair) SetPaused(i int, paused bool) error {
	if err := checkSide(i); err != nil {
		return err
	}
	from := p.turns.setPaused(i, paused)
	if from == paused {
		p.emitNoOp(p.sides[i].id, model.SetPaused, strconv.FormatBool(paused), model.Value{Bool: paused})
		return nil
	}
	p.emit(model.Update{Event: &model.Event{T: p.elapsed(), Side: p.sides[i].id, Setting: model.SetPaused, From: strconv.FormatBool(from), To: strconv.FormatBool(paused), Value: model.Value{Bool: paused}}})
	return nil
}

// Restart implements Controller.
func (p *Pair) Restart(i int) error {
	if err := checkSide(i); err != nil {
		return err
	}
	s := p.sides[i]
	s.change.Lock()
	err := s.restart()
	s.change.Unlock()
	if err != nil {
		return err
	}
	p.turns.apply(true)
	return nil
}

// Stop implements Controller. It returns once every child is stopped,
// whether or not anyone reads updates.
func (p *Pair) Stop() error {
	if p.stopped.Load() {
		// Another Stop is under way (a timer's, a signal's): this one
		// too returns only once it is done, as its doc promises; it
		// returned at once, and a caller that then looked found the
		// socket directory still there.
		<-p.down
		if p.cancel != nil {
			<-p.loopEnd
		}
		return nil
	}
	p.end() // a sample blocked on a full channel gives up, so the loop can end
	if p.cancel != nil {
		p.cancel()
	}
	// The children go first: a poll or pause the loop is waiting on then
	// fails at once instead of running into its timeout.
	p.shutdown()
	if p.cancel != nil {
		<-p.loopEnd
	}
	return nil
}

// shutdown stops every child and removes the socket directory. A side
// that is starting children sees stopped once they are up and stops them
// itself (side.start); shutdown waits for that.
func (p *Pair) shutdown() {
	if p.stopped.Swap(true) {
		<-p.down
		return
	}
	defer close(p.down)
	var kids []*child
	for _, s := range p.sides {
		srv, ld := s.takeDown()
		kids = append(kids, ld, srv)
	}
	stopChildren(kids...)
	// The directory goes before the wait below: a side still starting a
	// real server is cancelled by it (the child watches it, whileRunDir)
	// instead of holding Stop for the server's listen timeout.
	os.RemoveAll(p.dir)
	p.fill.stop()
	// A change in progress (a restart spawning, a child call) ends soon
	// now that the children are gone; wait for it, so nothing it started
	// outlives Stop.
	for _, s := range p.sides {
		s.change.Lock()
		s.change.Unlock()
	}
	p.watchers.Wait()
	if p.removeDir != nil {
		p.removeDir()
	}
}

// loop samples every interval, runs scripted changes and alternate turns,
// and ends the run after its duration.
func (p *Pair) loop(ctx context.Context) {
	defer close(p.loopEnd)
	defer func() {
		p.warnFillEnds() // a span whose fill was n/a throughout, not said yet
		p.warnNoPayload()
		p.emit(model.Update{Done: &model.Done{Err: ctx.Err()}})
		p.closeUpdates()
	}()
	interval := p.cfg.Interval.D()
	dur := p.cfg.Duration.D()
	// The loop fires the earliest change first, whatever order the
	// --at flags (or a preset) listed them in; a stable sort keeps the
	// given order among changes at the same time.
	script := slices.Clone(p.cfg.Script)
	slices.SortStableFunc(script, func(a, b model.Change) int { return cmp.Compare(a.At.D(), b.At.D()) })
	// Baseline poll so the first sample covers one interval.
	p.mach.start()
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
		el := p.clock(time.Now())
		for len(script) > 0 && script[0].At.D() <= el {
			ch := script[0]
			script = script[1:]
			if err := p.Apply(ch); err != nil {
				p.raise(model.Warn(p.sides[ch.Side].id, model.ScriptFailed{Change: ch.String(), Err: err.Error()}))
			}
		}
		p.pollSides()
		p.mach.tick()
		p.turns.tick()
		if dur > 0 && p.clock(time.Now()) >= dur {
			p.settle()
			return
		}
	}
}

// warnSched says once, where the kernel keeps no schedstat (macOS, a
// kernel without CONFIG_SCHED_INFO), why each process's time on a CPU,
// waiting for one and asleep are n/a, and what would give them.
func (p *Pair) warnSched() {
	var u *schedstat.Unavailable
	if err := schedstat.Supported(); errors.As(err, &u) {
		w := model.SchedUnknown{Cause: u.Cause}
		switch u.Cause {
		case schedstat.CauseOS:
			w.OS = runtime.GOOS
		case schedstat.CauseProc:
			w.Err = u.Reason
		}
		p.raise(model.Warn(model.WholePair, w))
	}
}
