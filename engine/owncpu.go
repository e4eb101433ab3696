package engine

import (
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// OwnCPU is the CPU this process has spent so far, user and system
// (getrusage of itself, all its threads, not its children): the
// controller's own cost, which it takes from the cores the pair runs on.
// False when it cannot be read.
func OwnCPU() (time.Duration, bool) {
	c := wire.SelfCounters(nbd.IOStats{})
	if c.UserS == 0 && c.SysS == 0 {
		return 0, false // getrusage failed: a live process has spent something
	}
	return time.Duration((c.UserS + c.SysS) * float64(time.Second)), true
}

// OwnCPU implements Controller.
func (p *Pair) OwnCPU() (time.Duration, bool) { return OwnCPU() }

// OwnCoresBusy is the cores a process spent on average between two
// readings of its CPU wall seconds apart; nil for an empty span.
func OwnCoresBusy(cpu0, cpu1 time.Duration, wall time.Duration) *model.Figure {
	if wall <= 0 || cpu1 < cpu0 {
		return nil
	}
	f := model.Figure((cpu1 - cpu0).Seconds() / wall.Seconds())
	return &f
}

// ownCoresBusy is the controller's cores busy over the run's measured
// span (the machine meter's first and last readings): what the report
// carries as ControllerCoresBusy.
func (m *machineMeter) ownCoresBusy() *model.Figure {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.first.t.IsZero() || m.first.self == 0 {
		return nil // not started, or getrusage failed
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return OwnCoresBusy(sec(m.first.self), sec(m.last.self), m.last.t.Sub(m.first.t))
}
