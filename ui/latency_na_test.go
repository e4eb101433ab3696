package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestUnmeasuredLatencyHasNoUnit: a real client's side (nbdcopy as the
// load, whose requests nbdscope does not see) read "p99 n/a ms": a unit
// on a figure there is none of. Unmeasured, it is "n/a" alone.
func TestUnmeasuredLatencyHasNoUnit(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		h.feed(4, 1)
		s := sample("A", 1.25, true)
		s.LatencyP50Ms, s.LatencyP99Ms = model.Unknown, model.Unknown
		h.send(model.Update{Sample: &s})
		a := panelOf(h.view(), "A")
		if strings.Contains(a, "n/a ms") || !strings.Contains(a, "p99 n/a") {
			t.Errorf("%dx%d: A's latency:\n%s", size[0], size[1], a)
		}
	}
}
