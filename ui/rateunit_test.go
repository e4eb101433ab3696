package ui

import (
	"strings"
	"testing"

	"nbdscope/units"
)

// --rate-unit reaches the explorer (issue 25: every displayed rate): the
// panels' rate and the throughput chart's scale are in Gbit/s, and
// without it in the binary unit that fits.
func TestRateUnitInTheExplorer(t *testing.T) {
	gbit, err := units.ParseRateScale("gbit")
	if err != nil {
		t.Fatal(err)
	}
	shownRate.Store(&gbit)
	defer shownRate.Store(nil)
	h := newHarness(t, Options{RateUnit: &gbit}, 160, 48)
	h.feed(8, 2)
	screen := h.m.View()
	if !strings.Contains(screen, "Gbit/s") || strings.Contains(screen, "GiB/s") {
		t.Fatalf("--rate-unit gbit: the screen shows no Gbit/s, or still GiB/s:\n%s", screen)
	}
	shownRate.Store(nil)
	h = newHarness(t, Options{}, 160, 48)
	h.feed(8, 2)
	if screen := h.m.View(); strings.Contains(screen, "Gbit/s") {
		t.Fatalf("without --rate-unit the screen shows Gbit/s:\n%s", screen)
	}
}
