package engine

import (
	"time"

	"nbdscope/model"
	"nbdscope/platform"
)

// Controller is what a front end drives: a pair that runs, reports Updates
// and takes live changes. The TUI depends on this interface only, so it can
// be tested against a fake.
type Controller interface {
	// Config is the configuration as currently in effect.
	Config() model.Config
	// Facts are the platform facts probed at start.
	Facts() platform.Facts
	// Updates delivers samples, events, crashes and warnings; it is closed
	// after a Done update. Stop does not wait for a reader: what does not
	// fit in the channel once Stop began (a Done among it, when nobody
	// read) is left out, and is still in the Report.
	Updates() <-chan model.Update
	// Apply validates a change and applies it to the running side; the
	// Event arrives through Updates once it took effect.
	Apply(model.Change) error
	// SetMode switches between alternate and concurrent.
	SetMode(mode model.Mode) error
	// SetPaused pauses or resumes a side's load.
	SetPaused(side int, paused bool) error
	// Restart starts a side's children again (after a crash).
	Restart(side int) error
	// Elapsed is the time since the run started.
	Elapsed() time.Duration
	// OwnCPU is the CPU the controller's own process has spent so far
	// (OwnCPU): the explorer shows its share of a core; false when it
	// cannot be read.
	OwnCPU() (time.Duration, bool)
	// Stop ends the run, stops every child and removes their sockets.
	Stop() error
}

// pairSetters apply the pair's own settings (Where AtPair) through their
// Controller calls, by setting name.
var pairSetters = map[string]func(c Controller, side int, v model.Value) error{
	model.SetMode:   func(c Controller, _ int, v model.Value) error { return c.SetMode(model.Mode(v.Str)) },
	model.SetPaused: func(c Controller, i int, v model.Value) error { return c.SetPaused(i, v.Bool) },
}

// ApplyTo makes the change through a Controller: a pair setting through
// its own call (SetMode, SetPaused), any other through Apply.
func ApplyTo(c Controller, ch model.Change) error {
	if set, ok := pairSetter(ch); ok {
		return set(c, ch.Side, ch.Value)
	}
	return c.Apply(ch)
}

// pairSetter is the Controller call of a change of a pair setting (the
// table's AtPair), and false for any other.
func pairSetter(ch model.Change) (func(c Controller, side int, v model.Value) error, bool) {
	if ch.Setting == nil {
		return nil, false
	}
	set, ok := pairSetters[ch.Setting.Name]
	return set, ok
}
