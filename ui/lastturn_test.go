package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestWaitingSideShowsItsLastTurn: a side that waits its turn shows its
// last turn's figures over the whole turn (the sample's Turn, which the
// run's summary agrees with), named as such, not the drain sample's own
// (here 0.43 receive calls per 2 MiB) nor the turn's last active sample's
// alone (10.2). Back on its turn, it shows its live figures again.
func TestWaitingSideShowsItsLastTurn(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		h.feed(8, 2)
		turn := sample("A", 2, true).Figures
		turn.Client.RecvCallsPer2MiB, turn.ThroughputBps = 3.0, model.Figure(1.25*(1<<30))
		drain := sample("A", 2.25, false)
		drain.Client.RecvCallsPer2MiB, drain.Turn = 0.43, &turn
		h.send(model.Update{Sample: &drain})
		v := h.view()
		a := panelOf(v, "A")
		if !strings.Contains(a, "3.00") || !strings.Contains(a, "1.25 GiB/s") || !strings.Contains(a, "last turn") ||
			strings.Contains(a, "0.43") || strings.Contains(a, "10.2") {
			t.Errorf("%dx%d: waiting A's panel does not show its last turn's figures (3.00 calls, 1.25 GiB/s, named last turn):\n%s", size[0], size[1], v)
		}
		h.feed(1, 2.5)
		if a := panelOf(h.view(), "A"); strings.Contains(a, "last turn") || !strings.Contains(a, "10.2") {
			t.Errorf("%dx%d: A on its turn again does not show its live figures:\n%s", size[0], size[1], h.view())
		}
	}
}

// panelOf is side's panel on a screen: the panels sit side by side, A's
// the left half of the lines down to their bottom border (the charts'
// legends below name the latest sample's figures).
func panelOf(view, side string) string {
	var out []string
	for _, l := range strings.Split(view, "\n") {
		r := []rune(l)
		half := len(r) / 2
		if side == "A" {
			out = append(out, string(r[:half]))
		} else {
			out = append(out, string(r[half:]))
		}
		if strings.HasPrefix(l, "┗") || strings.HasPrefix(l, "╰") {
			break
		}
	}
	return strings.Join(out, "\n")
}
