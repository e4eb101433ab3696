package ui

import (
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

// The header shows the controller's own CPU over the last two seconds of
// the run's clock, as top lists itself, and n/a when it cannot be read.
func TestHeaderShowsOwnCPU(t *testing.T) {
	h := newHarness(t, Options{}, 120, 30)
	h.f.at(10*time.Second, time.Second)
	h.m.Update(frameMsg{})
	if strings.Contains(h.view(), "nbdscope 0") {
		t.Fatalf("a share shown before a window was measured:\n%s", h.view())
	}
	h.f.at(12*time.Second, time.Second+12*time.Millisecond) // 12 ms of CPU in 2 s
	h.m.Update(frameMsg{})
	h.wantView("nbdscope 0.6%")

	h.f.mu.Lock()
	h.f.ownNA = true
	h.f.mu.Unlock()
	h.m.Update(frameMsg{})
	h.wantView("nbdscope n/a")
}

// The header drops its own CPU rather than clip the run's name.
func TestHeaderOwnCPUGivesWay(t *testing.T) {
	h := newHarness(t, Options{}, minWidth, minHeight)
	h.f.at(10*time.Second, time.Second)
	h.m.Update(frameMsg{})
	h.f.at(12*time.Second, time.Second+12*time.Millisecond)
	h.m.Update(frameMsg{})
	if first, _, _ := strings.Cut(h.view(), "\n"); strings.Contains(first, "0.6%") {
		t.Errorf("at %d columns the header kept its own CPU: %q", minWidth, first)
	}
}

// frameRun plays secs of the run's clock into the explorer: a sample of
// each side every interval (none when interval is 0; only side A's when
// oneSide) and the frame timer's ticks when the model asks for them, in
// the order they fall due; it returns the frames drawn and the timer's
// ticks, per second.
func frameRun(t *testing.T, secs float64, interval time.Duration, oneSide bool) (frames, ticks float64) {
	h := newHarness(t, Options{}, 160, 48)
	f0, t0 := h.m.frames, h.m.ticks
	const step = time.Millisecond
	end := time.Duration(secs * float64(time.Second))
	nextTick := h.m.nextTick()
	for at := step; at <= end; at += step {
		h.f.at(at, 0)
		if interval > 0 && at%interval == 0 {
			for _, side := range []model.SideID{"A", "B"} {
				if side == "B" && oneSide {
					break
				}
				h.m.Update(updateMsg{model.Update{Sample: ptr(sample(side, at.Seconds(), true))}})
			}
		}
		if at >= nextTick {
			h.m.Update(frameMsg{})
			nextTick = at + h.m.nextTick()
		}
	}
	return float64(h.m.frames-f0) / secs, float64(h.m.ticks-t0) / secs
}

func TestFramesPerSecondBounded(t *testing.T) {
	busy, _ := frameRun(t, 10, 250*time.Millisecond/2, false)
	if busy > 4.1 {
		t.Errorf("16 samples a second drew %.1f frames a second, want at most 4", busy)
	}
	idle, _ := frameRun(t, 10, 0, false)
	if idle < 0.9 || idle > 1.1 {
		t.Errorf("an idle explorer drew %.1f frames a second, want 1 (its clock)", idle)
	}
}

// Samples draw their frames in the wake-up that brought them: at the
// default interval every round of both sides' samples is drawn, and the
// frame timer, a wake-up of the controller's own each time it fires,
// fires about once a second, not four times (counted, not timed).
func TestFramesRideOnSamples(t *testing.T) {
	for _, one := range []bool{false, true} {
		frames, ticks := frameRun(t, 10, 250*time.Millisecond, one)
		t.Logf("one side %v: %.1f frames, %.1f timer ticks a second", one, frames, ticks)
		if frames < 3.9 || frames > 4.1 {
			t.Errorf("one side %v: 8 samples a second drew %.1f frames a second, want 4", one, frames)
		}
		if ticks > 1.1 {
			t.Errorf("one side %v: the frame timer fired %.1f times a second while samples came, want at most 1", one, ticks)
		}
	}
}

// A round's frame is drawn on its last sample, so that it shows both
// sides' samples of the round, not one side's of the round before (from
// the second round: a side not heard from yet is not waited for).
func TestFrameWaitsForRound(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	for at := 250 * time.Millisecond; at <= 2*time.Second; at += 250 * time.Millisecond {
		h.f.at(at, 0)
		for _, side := range []model.SideID{"A", "B"} {
			h.m.Update(updateMsg{model.Update{Sample: ptr(sample(side, at.Seconds(), true))}})
		}
		if h.m.dirty && at > 250*time.Millisecond {
			t.Fatalf("at %v a round of both sides' samples left the screen undrawn", at)
		}
	}
}
