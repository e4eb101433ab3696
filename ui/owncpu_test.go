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
// each side every interval (none when interval is 0) and a frame tick
// every frameInterval, in the order they fall due; it returns the frames
// drawn per second.
func frameRun(t *testing.T, secs float64, interval time.Duration) float64 {
	h := newHarness(t, Options{}, 160, 48)
	start := h.m.frames
	const step = time.Millisecond
	end := time.Duration(secs * float64(time.Second))
	for at := step; at <= end; at += step {
		h.f.at(at, 0)
		if interval > 0 && at%interval == 0 {
			for _, side := range []model.SideID{"A", "B"} {
				h.m.Update(updateMsg{model.Update{Sample: ptr(sample(side, at.Seconds(), true))}})
			}
		}
		if at%frameInterval == 0 {
			h.m.Update(frameMsg{})
		}
	}
	return float64(h.m.frames-start) / secs
}

// Samples of both sides at the default interval (8 a second) are drawn
// at most four times a second, and an idle explorer draws once a second
// (its clock): a frame is the explorer's main cost.
func TestFramesPerSecondBounded(t *testing.T) {
	busy := frameRun(t, 10, 250*time.Millisecond/2)
	if busy > 4.1 {
		t.Errorf("16 samples a second drew %.1f frames a second, want at most 4", busy)
	}
	idle := frameRun(t, 10, 0)
	if idle > 1.2 {
		t.Errorf("an idle explorer drew %.1f frames a second, want about 1 (its clock)", idle)
	}
}
