package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"nbdscope/engine/meter"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// side is one side of the pair. It owns its configuration, its two
// children (server and load) and the figures gathered from them, and it
// serialises its own changes.
//
// Why a per-side lock rather than an actor goroutine: every change has a
// caller waiting for its outcome (a key press shows the error, a scripted
// change warns), so an actor would only add a goroutine to start, feed and
// stop, and a queue that could outlive the run. The lock gives the same
// one-change-at-a-time order with nothing to leak. It is the side's own, so
// a slow change on one side (a spawn, a child that takes its time) never
// holds up the other side, the sampler or Config.
type side struct {
	idx  int
	name string
	id   model.SideID // the side on what it reports (SideAt(idx))
	p    *Pair        // spawning (binary, socket directory), updates, the mode

	// change is held for the whole of a change — validation, the child
	// call or spawn, the commit — so changes to this side apply one at a
	// time and each starts from the configuration the one before left.
	// Lock order: change, then turns, then mu.
	change sync.Mutex

	// mu guards everything below. It is held only for short reads and
	// writes, never across a child call or a spawn.
	mu     sync.Mutex
	cfg    model.SideConfig // the configuration in effect
	server *child           // nil for an external target
	load   *child
	uri    string
	down   bool // crashed or stopping; no polling

	// meter is the side's accounting: its last reading, the run's,
	// the turn's and the segments' totals (engine/meter).
	meter meter.Meter

	loadCPUs, serverCPUs []int // where place held the processes (nil: not held)
	// execCounted: the exec client's socket calls are counted (its last
	// poll reply said so); callsWarned: the warning that they are not was
	// given.
	execCounted, callsWarned bool
	// flowWarned is the last contradiction of an exec side's workload
	// that was said (exec_side.go).
	flowWarned string
	// idle follows an exec side's client runs that moved no payload
	// (exec_idle.go).
	idle execIdle
	// assumed is the payload of a real client's runs against a real
	// server, one export a run (exec_assumed.go).
	assumed assumedPayload
	// errsWarned gives the warning that the side's requests fail once
	// (not under mu: only the first sample that sees failures gives it).
	errsWarned sync.Once
	// targetWhy is why a --target's server is not measured (nil: it is,
	// or the side has no target): a change of its buffers says it.
	targetWhy *model.Reason

	// fill is what the looks for the side's data sockets and its samples
	// said of its fill, for its warning (fillnotes.go).
	fill fillNotes

	// readLoad and readActive are the load and its active clock at the
	// last read: whether it ran since (shared.go).
	readLoad   *child
	readActive int64
}

func newSide(p *Pair, i int, cfg model.SideConfig) *side {
	return &side{idx: i, name: cfg.Name, id: model.SideAt(i), p: p, cfg: cfg}
}

// config is the side's configuration in effect.
func (s *side) config() model.SideConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// children returns the side's current server and load (either may be nil).
func (s *side) children() (server, load *child) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server, s.load
}

// targetURI is the URI the side's load connects to.
func (s *side) targetURI() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uri
}

// runningLoad is the load process when the side is up, else nil.
func (s *side) runningLoad() *child {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil
	}
	return s.load
}

// start spawns the side's children with its configuration and places
// them. The caller holds s.change (or is Start, before anyone else can).
func (s *side) start() error {
	sc := s.fitExport()
	srv, uri, err := s.spawnServer(sc)
	if err != nil {
		return s.startFailed(err)
	}
	s.probeExport(sc, uri)
	lspec := wire.NewLoadSpec(sc, uri, model.ArgEnv{Mode: s.p.turns.Mode(), Allowed: s.p.cpus})
	lspec.Paused = true // the turns start it
	ld, _, err := spawn(s.p.opts.Exe, model.RoleLoad, sc.Name, lspec, s.p.opts.StartTimeout)
	if err != nil {
		stopChildren(srv)
		return s.startFailed(err)
	}
	s.mu.Lock()
	if s.p.stopped.Load() {
		// Stop ran while these were spawning and could not see them.
		s.mu.Unlock()
		stopChildren(ld, srv)
		return errRunEnded
	}
	s.server, s.load, s.uri, s.down = srv, ld, uri, false
	s.meter.Stop()
	s.p.watchers.Add(2)
	s.mu.Unlock()
	s.namePeer(srv, ld)
	go s.watch(srv)
	go s.watch(ld)
	s.place(s.p.turns.Mode())
	return nil
}

// startFailed is the error of a failed start: the run's end when Stop
// came meanwhile (and took the socket directory away), else err.
func (s *side) startFailed(err error) error {
	if s.p.stopped.Load() {
		return errRunEnded
	}
	return err
}

// spawnServer starts the side's server, unless it targets an external one,
// and returns the URI its load connects to.
func (s *side) spawnServer(sc model.SideConfig) (*child, string, error) {
	if sc.Target != "" {
		return s.attachTarget(sc), sc.Target, nil // nil: not local, or not ours to look at (target.go)
	}
	sock := ""
	if sc.Transport == model.TransportUnix {
		sock = filepath.Join(s.p.dir, fmt.Sprintf("%s.sock", sc.Name))
	}
	spec := wire.NewServerSpec(sc, sock)
	spec.RunDir = s.p.dir
	timeout := s.p.opts.StartTimeout
	if sc.Server != "" {
		timeout = max(timeout, realServerStart) // the real server's own start, bounded in the child
	}
	c, ready, err := spawn(s.p.opts.Exe, model.RoleServer, sc.Name, spec, timeout)
	if err != nil {
		return nil, "", err
	}
	c.realPID = ready.RealPID
	return c, ready.URI, nil
}

var errRunEnded = errors.New("the run has ended")

// stopChildren stops children at once (nil ones are skipped) and waits.
func stopChildren(kids ...*child) {
	var wg sync.WaitGroup
	for _, c := range kids {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.stop(ChildStopGrace) }()
	}
	wg.Wait()
}

// restart stops the side's children and starts new ones with its
// configuration. The caller holds s.change.
func (s *side) restart() error {
	if s.p.stopped.Load() {
		return errRunEnded
	}
	s.mu.Lock()
	s.down = true
	srv, ld := s.server, s.load
	s.mu.Unlock()
	stopChildren(ld, srv)
	return s.start()
}

// takeDown marks the side down for good (the pair is stopping) and
// returns its children to stop.
func (s *side) takeDown() (server, load *child) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
	return s.server, s.load
}

// watch reports a child that exits while it should be running.
func (s *side) watch(c *child) {
	defer s.p.watchers.Done()
	if c == nil {
		return
	}
	<-c.exited
	s.mu.Lock()
	if s.p.stopped.Load() || s.down || (s.server != c && s.load != c) {
		s.mu.Unlock()
		close(c.reported)
		return
	}
	s.down = true
	other, uri := s.load, s.uri
	if c == s.load {
		other = s.server
	}
	s.mu.Unlock()
	s.p.emit(model.Update{Crash: s.p.crashOf(s.id, uri, c, other)})
	close(c.reported)
	if other != nil {
		// A side is a server and its load together: without one the
		// other measures nothing. Stop it so a restart starts clean.
		other.stop(ChildStopGrace)
	}
}

// apply makes one change to the side: validate it against the
// configuration in effect, apply it where the setting lives (a child, the
// placement, new children), then commit it and report the Event. It
// returns whether the change took effect on running children (then the
// side deserves a fresh alternate-mode turn to show it).
func (s *side) apply(st *model.Setting, v model.Value) (live bool, err error) {
	s.change.Lock()
	defer s.change.Unlock()
	if s.p.stopped.Load() {
		return false, errRunEnded
	}
	cur := s.config()
	next := cur
	if err := next.SetValue(st, v); err != nil {
		return false, err
	}
	if st.Spawned && cur.Target != "" {
		if err := s.targetRefusal(st, cur); err != nil {
			return false, err
		}
	}
	if err := s.p.refusedChange(next, st); err != nil {
		return false, err
	}
	var reply wire.Msg
	switch st.Where {
	case model.AtRestart:
		err = s.applyRestart(cur, next)
	case model.AtPlacement:
		live = s.applyPlacement(next)
	case model.AtLoad, model.AtServer:
		live, reply, err = s.applyToChild(st, next, st.Where == model.AtServer)
	default:
		err = fmt.Errorf("%s cannot change while the load runs", st.Name)
	}
	if err != nil {
		return false, err
	}
	from, to := cur.Value(st), next.Value(st)
	ev := &model.Event{T: s.p.elapsed(), Side: s.id, Setting: st.Name, From: st.Format(from), To: st.Format(to), Value: to, Reconnected: reply.Reconnected}
	if s.realBuffer(next, st) {
		ev.Effective, ev.Reached = reply.Effective, &reply.Reached // a real process's sockets, read back
	}
	// Applied all the same (a real server's sockets opened since get it),
	// but said: a before and after of one value is no comparison.
	ev.NoOp = ev.From == ev.To
	s.p.emit(model.Update{Event: ev})
	if ev.NoOp {
		s.p.raise(model.Warn(s.id, model.NoOpChange{Setting: st.Name, Value: ev.To}))
	}
	return live, nil
}

// realBuffer tells whether st is a buffer of a real process's sockets on
// a side configured as sc: a real server's, or an exec side's client's,
// changed from outside; the change's event then says what it reached.
func (s *side) realBuffer(sc model.SideConfig, st *model.Setting) bool {
	if st.Type != model.TypeBuf {
		return false
	}
	return (sc.Server != "" || sc.Target != "") && st.Where == model.AtServer || sc.Exec != "" && st.Where == model.AtLoad
}

// commit makes next the configuration in effect. Only a holder of s.change
// calls it, so no other change can have come in between.
func (s *side) commit(next model.SideConfig) {
	s.mu.Lock()
	s.cfg = next
	s.mu.Unlock()
}

// applyRestart applies a setting that needs new children. Children that
// do not start (a real server that never listens, a client that is not
// there) lose nothing: the side goes back to what it ran, and the error
// says so. Left down with the command that failed, it showed as running
// with its last figures, and the other side ran alone.
func (s *side) applyRestart(cur, next model.SideConfig) error {
	s.commit(next)
	if err := s.restart(); err != nil {
		if errors.Is(err, errRunEnded) {
			return err
		}
		s.commit(cur)
		if rerr := s.restart(); rerr != nil {
			return fmt.Errorf("%w; going back to what side %s ran failed too: %v", err, s.name, rerr)
		}
		s.p.turns.apply(true)
		return fmt.Errorf("%w (side %s runs as before)", err, s.name)
	}
	s.p.turns.apply(true)
	return nil
}

// applyPlacement holds the running processes where next says.
func (s *side) applyPlacement(next model.SideConfig) bool {
	s.commit(next)
	if s.runningLoad() == nil {
		return false
	}
	s.reseat(s.p.turns.Mode())
	return true
}

// reseat places the running processes again after the placement or the
// mode changed, and gives the load the hash threads that placement and
// mode resolve to when the setting is left to auto. The caller holds
// s.change.
func (s *side) reseat(mode model.Mode) {
	s.place(mode)
	sc := s.config()
	ld := s.runningLoad()
	if sc.HashThreads > 0 || ld == nil {
		return
	}
	st, _ := model.Lookup(model.SetHashThreads)
	cmd := s.p.childSet(st, sc, mode)
	if _, err := ld.call(cmd, 30*time.Second); err != nil && !errors.Is(err, ErrChildGone) {
		s.p.raise(model.Warn(s.id, model.ConsumeNotChanged{Setting: model.SetHashThreads, Value: cmd.Int, Err: err.Error()}))
	}
}

// applyToChild sends a setting to the child that owns it. A side that is
// not running takes it at its next (re)start. reconnected says the load's
// connections were re-opened for it (a TCP buffer back to the OS default).
func (s *side) applyToChild(st *model.Setting, next model.SideConfig, toServer bool) (live bool, reply wire.Msg, err error) {
	cmd := s.p.childSet(st, next, s.p.turns.Mode())
	s.mu.Lock()
	target, ld, down := s.load, s.load, s.down
	if toServer {
		target = s.server
	}
	s.mu.Unlock()
	if down || target == nil {
		s.commit(next)
		return false, wire.Msg{}, nil
	}
	m, err := target.call(cmd, 30*time.Second)
	if err != nil {
		return false, wire.Msg{}, fmt.Errorf("side %s %s: %w", s.name, st.Name, err)
	}
	s.commit(next)
	if st.Type == model.TypeBuf {
		s.checkClamp(st.Name, st.Socket, cmd.Int, m.Effective)
	}
	if m.Reconnect && ld != nil {
		// The server's open TCP sockets keep the buffer that was set
		// (locked, not autotuned): only new connections get the default.
		if _, err := ld.call(wire.Cmd{Op: "reconnect"}, 30*time.Second); err != nil {
			return true, m, fmt.Errorf("side %s %s: the default applies to new connections, but re-opening the open ones failed: %w", s.name, st.Name, err)
		}
		m.Reconnected = true
	}
	return true, m, nil
}

// childSet is the command that applies a setting, at its value in sc, to
// the child it lives in, resolved against the pair's mode and cores.
func (p *Pair) childSet(st *model.Setting, sc model.SideConfig, mode model.Mode) wire.Cmd {
	return wire.SetCmd(st, st.ChildArg(sc.Value(st), sc, model.ArgEnv{Mode: mode, Allowed: p.cpus}))
}

// checkClamp warns when the kernel gave a buffer less than the request
// should have given, with the limit that clamped it and how to raise it.
func (s *side) checkClamp(setting string, which nbd.SockBuf, req, eff int) {
	if req <= 0 || eff <= 0 {
		return
	}
	c, clamped := s.p.limit().Check(which, req, eff)
	if !clamped {
		return
	}
	s.p.raise(model.Warn(s.id, model.Clamped{Setting: setting, Requested: int64(req), Expected: int64(s.p.limit().Expected(req)), Got: int64(eff),
		Limit: c.Limit, Command: c.Fix, Persist: c.Persist, Where: c.Where}))
}
