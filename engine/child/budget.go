package child

import (
	"errors"
	"fmt"
	"time"

	"nbdscope/engine/wire"
)

// A measurement of a fixed amount (sweep --bytes) is a budget of whole
// requests that the load's gate lets through: the load sends that many and
// no more, the gate closes itself behind the last one, and the child notes
// when the first was let in and when the last came back. Timing it here,
// on the child's monotonic clock, rather than at the controller's next
// sample, is what makes a measurement's time that of its bytes: the
// sampling interval neither pads it nor cuts it, and no figure is scaled
// from a rate.

// budget is the gate's state while a measurement runs. g.mu guards it.
type budget struct {
	on     bool
	left   int64 // requests still to let in
	closed bool  // the gate closed itself behind the last one
	first  time.Time
	last   time.Time
	done   chan struct{} // closed once the last request came back
}

// admit lets one request in. g.mu is held and the gate is open.
func (g *gate) admit() {
	g.busy++
	b := &g.bud
	if !b.on {
		return
	}
	if b.first.IsZero() {
		b.first = time.Now()
	}
	b.left--
	if b.left == 0 {
		// The last of the budget: nothing more goes out.
		g.paused, g.resume, b.closed = true, make(chan struct{}), true
	}
}

// budgetDrained ends a measurement whose every request came back. g.mu is
// held and busy just fell to 0.
func (g *gate) budgetDrained() {
	b := &g.bud
	if b.on && b.left == 0 {
		b.last = time.Now()
		b.on, b.closed = false, false
		close(b.done)
	}
}

// leaveUnsent is leave for a request let in but not sent (its buffer had
// to grow first, which the completion callback may not do): a running
// measurement gets it back, so the worker's own send is the one counted.
func (g *gate) leaveUnsent() {
	g.mu.Lock()
	if b := &g.bud; b.on {
		b.left++
		if b.closed {
			b.closed, g.paused = false, false
			close(g.resume)
		}
	}
	g.mu.Unlock()
	g.leave()
}

// drainForBudget waits, at most drainWait, for a paused gate to have no
// request in flight: a measurement starts from nothing outstanding.
func (g *gate) drainForBudget() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.paused {
		return errors.New("load: a measurement starts from a paused load")
	}
	g.waitUntil(drainWait, func() bool { return g.busy == 0 })
	if g.busy > 0 {
		return fmt.Errorf("load: %d requests from before the measurement still in flight after %v", g.busy, drainWait)
	}
	return nil
}

// openBudget opens the gate for n requests; the channel closes once the
// last came back.
func (g *gate) openBudget(n int64) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bud = budget{on: true, left: n, done: make(chan struct{})}
	g.open()
	return g.bud.done
}

// endBudget closes the gate on a measurement that did not finish; it
// returns how many requests it had still to send.
func (g *gate) endBudget() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	left := g.bud.left
	g.bud.on, g.bud.closed = false, false
	if !g.paused {
		g.paused, g.resume = true, make(chan struct{})
	}
	return left
}

// budgetWall is the finished measurement's first-sent … last-back time.
func (g *gate) budgetWall() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bud.last.Sub(g.bud.first)
}

// measure sends c.Requests requests from a paused load and answers when
// the last has come back, the gate closed behind it; at most c.LimitMs.
// The load's counters are still while the gate is closed and drained, so
// their change across the measurement is its requests' own.
func (r *loadRole) measure(c wire.Cmd) wire.Msg {
	if c.Requests <= 0 || c.LimitMs <= 0 {
		return childFail(errors.New("load: measure needs a positive request count and time limit"))
	}
	if err := r.gate.drainForBudget(); err != nil {
		return childFail(err)
	}
	followPlacement()
	ops0, bytes0, errs0 := r.ops.Load(), r.bytes.Load(), r.errs.Load()
	r.budMaxLat.Store(0)
	done := r.gate.openBudget(c.Requests)
	limit := time.Duration(c.LimitMs) * time.Millisecond
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		left := r.gate.endBudget()
		return childFail(fmt.Errorf("load: the measurement's %d requests did not come back within %v (%d not yet sent)", c.Requests, limit, left))
	case <-r.ctx.Done():
		r.gate.endBudget()
		return childFail(errors.New("load: stopped during a measurement"))
	}
	m := &wire.MeasuredMsg{Requests: c.Requests, Ops: r.ops.Load() - ops0, Bytes: r.bytes.Load() - bytes0, Errors: r.errs.Load() - errs0,
		WallNs: int64(r.gate.budgetWall()), MaxLatNs: r.budMaxLat.Load()}
	if v, ok := r.lastErr.Load().(string); ok && m.Errors > 0 {
		m.LastErr = v
	}
	return wire.Msg{Measured: m}
}
