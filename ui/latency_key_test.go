package ui

import (
	"strings"
	"testing"
)

// TestLatencyKeyShowsTheChart: at 80x24, where one chart fits at a time,
// l turns the latency chart on and shows it, where it said "latency chart
// on" and left it pages away; at 160x48 it is among the charts the first
// page shows, which stays. l again takes it away.
func TestLatencyKeyShowsTheChart(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		h.press("l")
		v := h.view()
		if !strings.Contains(v, "latency (ms)") {
			t.Errorf("%dx%d: l did not show the latency chart:\n%s", size[0], size[1], v)
		}
		if moved := !strings.Contains(v, "throughput ("); moved != strings.Contains(v, "v shows the others") {
			t.Errorf("%dx%d: the charts paged to latency: %v, and the message does not say so:\n%s", size[0], size[1], moved, v)
		}
		h.press("l")
		if v := h.view(); strings.Contains(v, "latency (ms)") {
			t.Errorf("%dx%d: l again left the latency chart:\n%s", size[0], size[1], v)
		}
	}
}
