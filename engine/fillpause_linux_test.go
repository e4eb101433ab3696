package engine

import (
	"testing"
	"time"

	"nbdscope/model"
)

// TestPausedSidesLeaveKernelFill: with both sides paused, the kernel's
// fill meter watches no socket, so its timers stop (an idle explorer
// wakes no CPU 2000 times a second for it); resumed, a side's sockets
// are watched again and its fill measured.
func TestPausedSidesLeaveKernelFill(t *testing.T) {
	p := startPair(t, testConfig())
	if p.fill.kern == nil {
		t.Skip("the kernel's fill programs do not load here")
	}
	hasFill := func(u model.Update) bool { return u.Sample != nil && u.Sample.Active && u.Sample.Fill().Known() }
	waitFor(t, p, 15*time.Second, "a sample with a fill", hasFill)
	if n := p.fill.kern.Watching(); n == 0 {
		t.Fatal("no socket watched while the pair runs")
	}
	for i := range 2 {
		if err := p.SetPaused(i, true); err != nil {
			t.Fatal(err)
		}
	}
	paused := map[model.SideID]int{}
	waitFor(t, p, 10*time.Second, "two idle samples of each side", func(u model.Update) bool {
		if s := u.Sample; s != nil && !s.Active {
			paused[s.Side]++
		}
		return paused["A"] >= 2 && paused["B"] >= 2
	})
	if n := p.fill.kern.Watching(); n != 0 {
		t.Errorf("%d sockets watched with both sides paused, want 0", n)
	}
	if err := p.SetPaused(0, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 15*time.Second, "a sample with a fill after resuming", hasFill)
	if n := p.fill.kern.Watching(); n == 0 {
		t.Error("no socket watched after resuming")
	}
}
