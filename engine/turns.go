package engine

import (
	"errors"
	"sync"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// turns decides which sides' loads run: the mode, the user's pauses and,
// in alternate mode, whose turn it is. It is the one place that pauses and
// resumes load processes.
type turns struct {
	sides [2]*side
	slice time.Duration // how long a side runs alone in alternate mode
	warn  func(s *side, what model.WarningParams)
	// cut, if set, is called between the pauses and the resumes of a
	// decision that pauses one load and resumes the other: one server
	// serving both sides is read there, when neither runs (shared.go).
	cut func()
	// holds keep the turn on a side around its scripted changes
	// (turnplan.go), on the run's clock; nil clock: none.
	holds []hold
	clock func(time.Time) time.Duration

	// send serialises deciding and sending, so two decisions never
	// interleave their pause and resume calls and the last decision made
	// is the one the loads end up in. It is held across child calls; mu is
	// not.
	send sync.Mutex

	mu     sync.Mutex // guards the state below
	mode   model.Mode
	paused [2]bool // paused by the user
	turn   int     // alternate mode: the side whose turn it is
	turnAt time.Time
	// heldSince is when the side whose turn it is got it from the other:
	// the changes that keep its turn going (give) keep it no more than two
	// slices in a row.
	heldSince time.Time
}

func newTurns(mode model.Mode, interval time.Duration, sides [2]*side, warn func(*side, model.WarningParams)) *turns {
	now := time.Now()
	return &turns{sides: sides, slice: model.TurnLength(interval), warn: warn, mode: mode, turnAt: now, heldSince: now}
}

// Mode is the current mode.
func (t *turns) Mode() model.Mode {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode
}

// setMode switches the mode and returns the one before.
func (t *turns) setMode(mode model.Mode) (from model.Mode) {
	t.mu.Lock()
	from, t.mode = t.mode, mode
	if from != mode && mode == model.ModeAlternate {
		t.heldSince = time.Now() // the side whose turn it is holds it from now
	}
	t.mu.Unlock()
	if from != mode {
		t.apply(true)
	}
	return from
}

// setPaused records a user pause and returns the state before.
func (t *turns) setPaused(i int, paused bool) (from bool) {
	t.mu.Lock()
	from, t.paused[i] = t.paused[i], paused
	t.mu.Unlock()
	if from != paused {
		t.apply(true)
	}
	return from
}

// userPaused says the user paused side i.
func (t *turns) userPaused(i int) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paused[i]
}

// give starts a fresh alternate-mode turn for side i after a change of
// it, so that the effect shows in the next samples instead of after the
// other side's turn. When i has the turn already its load runs, and the
// turn goes on (keepTurn): a change of a side at every turn (run --at, a
// user stepping its buffer) once restarted it each time, and the other
// side never ran.
func (t *turns) give(i int) {
	t.mu.Lock()
	if t.mode != model.ModeAlternate {
		t.mu.Unlock()
		return
	}
	now := time.Now()
	if t.turn == i {
		t.turnAt = keepTurn(t.turnAt, t.heldSince, now, t.slice)
		t.mu.Unlock()
		return
	}
	t.turn, t.turnAt, t.heldSince = i, now, now
	t.mu.Unlock()
	t.apply(true)
}

// keepTurn is when the slice of the side whose turn it is counts from
// after a change of that side at now: late enough that half a slice is
// left to show the change, but never so late that the side holds the turn
// more than two slices since it got it (heldSince), and never earlier
// than it was.
func keepTurn(turnAt, heldSince, now time.Time, slice time.Duration) time.Time {
	later := now.Add(-slice / 2)
	if limit := heldSince.Add(slice); later.After(limit) {
		later = limit
	}
	if later.After(turnAt) {
		return later
	}
	return turnAt
}

// tick passes the turn on when the slice is up (the sampling loop calls it).
// It does not wait: a pause answers once the side's requests in flight have
// drained, which under deep queues (or a stuck target) takes long, and the
// samples must go on meanwhile, so a stall shows as a flat line rather than
// a hole. A tick while a decision is being sent does nothing.
func (t *turns) tick() {
	if !t.send.TryLock() {
		return
	}
	go func() {
		defer t.send.Unlock()
		t.applyLocked(false)
	}()
}

// apply sends each running load the state it should be in; force sends it
// even if the turn did not change (after a restart, a pause, a mode).
func (t *turns) apply(force bool) {
	t.send.Lock()
	defer t.send.Unlock()
	t.applyLocked(force)
}

// applyLocked is apply with t.send held.
func (t *turns) applyLocked(force bool) {
	t.mu.Lock()
	switched := t.mode == model.ModeAlternate && t.passes(time.Now())
	if switched {
		t.turn, t.turnAt, force = 1-t.turn, time.Now(), true
	}
	mode, turn, paused := t.mode, t.turn, t.paused
	t.mu.Unlock()
	if !force {
		return
	}
	var loads [2]*child
	var up [2]bool
	for i, s := range t.sides {
		loads[i] = s.runningLoad()
		up[i] = loads[i] != nil
	}
	run := decideRuns(mode, turn, paused, up)
	// Pause first, then resume, so the sides never overlap; in between,
	// the pauses answered, neither load runs.
	var stops, starts int
	for i, c := range loads {
		switch {
		case c == nil:
		case !run[i]:
			stops++
			t.sendPaused(t.sides[i], c, true)
		default:
			starts++
		}
	}
	if t.cut != nil && stops > 0 && starts > 0 {
		t.cut()
	}
	for i, c := range loads {
		if c != nil && run[i] {
			t.sendPaused(t.sides[i], c, false)
		}
	}
	// The slice counts from now, when the side whose turn it is runs: a
	// pause drains the other side's requests (up to 2 s) and a first
	// resume warms the side's buffers (up to 5 s), and a slice that
	// counted those would leave a side with deep queues no turn at all.
	t.mu.Lock()
	if t.turn == turn {
		t.turnAt = time.Now()
		if switched {
			t.heldSince = t.turnAt
		}
	}
	t.mu.Unlock()
}

// passes tells whether the turn passes to the other side at now: when
// the slice is up, unless a hold keeps it, or at once when a hold gives
// it to the other side. The caller holds t.mu.
func (t *turns) passes(now time.Time) bool {
	if t.clock != nil {
		if side, held := heldBy(t.holds, t.clock(now)); held {
			return side != t.turn
		}
	}
	return now.Sub(t.turnAt) >= t.slice
}

// sendPaused tells one load to pause or resume. A failure is reported,
// never dropped: a load that did not pause would run into the other side's
// turn and skew both. A child that died is left to the crash report.
func (t *turns) sendPaused(s *side, c *child, paused bool) {
	_, err := c.call(pauseCmd(paused), 30*time.Second)
	if err == nil || errors.Is(err, ErrChildGone) || s.runningLoad() != c {
		return
	}
	t.warn(s, model.TurnFailed{Pause: paused, Err: err.Error()})
}

// decideRuns says which loads should run. In alternate mode only the side
// whose turn it is runs, unless the other is paused or down: then it may
// run rather than idle.
func decideRuns(mode model.Mode, turn int, paused, up [2]bool) [2]bool {
	var run [2]bool
	for i := range run {
		run[i] = !paused[i]
		o := 1 - i
		if mode == model.ModeAlternate && i != turn && !paused[o] && up[o] {
			run[i] = false
		}
	}
	return run
}

// pauseCmd is the load child's set command for a pause or resume.
func pauseCmd(paused bool) wire.Cmd {
	st, _ := model.Lookup(model.SetPaused)
	return wire.SetCmd(st, st.ChildArg(model.Value{Bool: paused}, model.SideConfig{}, model.ArgEnv{}))
}
