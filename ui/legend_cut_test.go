package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// cutFigure is a figure cut short: a digit or a point right before "…".
var cutFigure = regexp.MustCompile(`[0-9.]…`)

// TestLegendNeverCutsAFigure: at 80 columns, with A waiting ("last
// turn"), the wake-ups chart's legend read "… B ━━ cli 1.51 ┅┅ srv 1…":
// a figure cut to its first digit, which could be 1, 12 or 140. A legend
// too wide drops whole series from its end, never part of a figure.
func TestLegendNeverCutsAFigure(t *testing.T) {
	h := waitingAfterTurn(t, [2]int{80, 24})
	seen := map[string]bool{}
	for range 8 {
		h.press("v")
		for _, l := range strings.Split(ansi.Strip(h.view()), "\n") {
			if !strings.Contains(l, "A ") || !strings.Contains(l, "B ") || !strings.ContainsAny(l, "─━") {
				continue
			}
			if seen[l] {
				continue
			}
			seen[l] = true
			if cutFigure.MatchString(l) {
				t.Errorf("a legend cuts a figure:\n%s", l)
			}
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("a legend is %d wide:\n%s", w, l)
			}
		}
	}
	if len(seen) < 3 {
		t.Fatalf("saw %d legends paging with v", len(seen))
	}
}
