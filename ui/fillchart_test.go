package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// fillChartRun feeds a 30 s run in which A's send buffer goes from the OS
// default (full 97% of the time) to 2m at 15 s (full 5%, empty 70%): the
// fill chart shows the change at its marker.
func fillChartRun(h *harness) {
	for i := 1; i <= 120; i++ {
		tt := float64(i) * 0.25
		a, b := sample("A", tt, true), sample("B", tt, true)
		if tt > 15 {
			a.SndBuf.ServerRequested, a.SndBuf.ServerEffective, a.SndBuf.Clamped = "2m", 425984, true // as the engine judges it
			a.SetFill(model.Fill{Samples: 50, FullPct: 5, EmptyPct: 70, Bytes: 60000, Limit: 425984})
			a = withRecent(a)
		}
		h.m.Update(updateMsg{model.Update{Sample: &a}})
		h.m.Update(updateMsg{model.Update{Sample: &b}})
		if i == 60 {
			h.m.Update(updateMsg{model.Update{Event: &model.Event{T: tt, Side: "A", Setting: "sndbuf", From: "default", To: "2m"}}})
		}
	}
	h.m.Update(frameMsg{})
}

// showFillChart presses v until the fill chart is on screen (at most once
// round the charts).
func showFillChart(h *harness) bool {
	for range len(h.m.charts.defs()) + 1 {
		if strings.Contains(h.view(), "sndbuf full/empty (%)") || strings.Contains(h.view(), "send buffer full ≥90%") {
			return true
		}
		h.press("v")
	}
	return false
}

// fillChartState is TestNoWordCut's state with the fill chart on screen.
func fillChartState(h *harness) []string {
	fillChartRun(h)
	if !showFillChart(h) {
		h.t.Fatal("v never reached the fill chart")
	}
	return nil
}

// TestFillChart (issue 24): v reaches the fill chart at 80x24 and 160x48;
// its legend gives each side's last full and empty shares, its scale is
// 0–100%, and A's change is marked on it.
func TestFillChart(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, sz[0], sz[1])
		fillChartState(h)
		v := h.view()
		for _, want := range []string{"A ── full 5 ┄┄ empty 70", "B ━━ full 2 ┅┅ empty 81", "┊", "A"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: the fill chart lacks %q:\n%s", sz[0], sz[1], want, v)
			}
		}
		if !strings.Contains(v, "100┤") && !strings.Contains(v, "100┼") && !strings.Contains(v, "120┤") {
			t.Errorf("%dx%d: the fill chart's scale is not fixed to the shares:\n%s", sz[0], sz[1], v)
		}
	}
}

// TestFillChartUnmeasured: a sample whose fill was not measured is a gap
// in the fill chart and n/a in its legend, never a 0.
func TestFillChartUnmeasured(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	for i := 1; i <= 20; i++ {
		a, b := sample("A", float64(i)*0.25, true), sample("B", float64(i)*0.25, true)
		a.SetFill(model.NoFill)
		a = withRecent(a)
		h.m.Update(updateMsg{model.Update{Sample: &a}})
		h.m.Update(updateMsg{model.Update{Sample: &b}})
	}
	h.m.Update(frameMsg{})
	p := h.m.charts.last[0]
	if p == nil || !isNaN(p.v[mFullPct]) || !isNaN(p.v[mEmptyPct]) {
		t.Fatalf("A's unmeasured fill charted as %v", p)
	}
	if !showFillChart(h) {
		t.Fatal("v never reached the fill chart")
	}
	if v := h.view(); !strings.Contains(v, "A ── full n/a ┄┄ empty n/a") {
		t.Errorf("legend:\n%s", v)
	}
}

func isNaN(f float64) bool { return f != f }
