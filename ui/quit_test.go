package ui

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"nbdscope/model"
)

// TestQuitCancelledIsClean: the engine ends the update stream with its
// cancelled context when Stop ends the run; after q that is a clean end
// (exit status 0), not "nbdscope: context canceled".
func TestQuitCancelledIsClean(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("q")
	h.m.Update(updateMsg{model.Update{Done: &model.Done{Err: context.Canceled}}})
	if h.m.doneErr != nil {
		t.Errorf("doneErr = %v after q, want nil", h.m.doneErr)
	}
	h.wantView("stopping the pair")

	// Without q, a failed run is an error.
	h = newHarness(t, Options{}, 80, 24)
	boom := errors.New("boom")
	h.m.Update(updateMsg{model.Update{Done: &model.Done{Err: boom}}})
	if !errors.Is(h.m.doneErr, boom) {
		t.Errorf("doneErr = %v, want boom", h.m.doneErr)
	}
}

// slowStop is a controller whose Stop takes a while.
type slowStop struct {
	*fakeCtrl
	entered chan struct{}
	release chan struct{}
}

func (s *slowStop) Stop() error {
	close(s.entered)
	<-s.release
	return s.fakeCtrl.Stop()
}

// TestStopperWaits: a second quit key leaves the program while the stop
// the first one started is still running; Run stops the pair through the
// same stopper, so it waits for that stop instead of returning early (or
// stopping twice).
func TestStopperWaits(t *testing.T) {
	f := &slowStop{fakeCtrl: newFake(), entered: make(chan struct{}), release: make(chan struct{})}
	m := newModel(f, Options{})
	cmd := m.quit()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); cmd() }() // the background stop
	<-f.entered
	done := make(chan error)
	go func() { done <- m.stopper.stop(f) }() // Run's
	select {
	case <-done:
		t.Fatal("the second stop returned while the first was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(f.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := f.stopCount(); n != 1 {
		t.Errorf("Stop called %d times, want 1", n)
	}
}
