package ui

import (
	"math"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/model"
)

// TestRateFormat: throughput has about three significant digits, and
// moves to the next unit from 1000 (no "1012.4 MiB/s" next to
// "1.02 GiB/s").
func TestRateFormat(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, c := range []struct {
		bps  float64
		want string
	}{
		{0, "0 B/s"},
		{512, "512 B/s"},
		{2048, "2.00 KiB/s"},
		{18.5 * mib, "18.5 MiB/s"},
		{935.2 * mib, "935 MiB/s"},
		{1012.4 * mib, "0.99 GiB/s"},
		{1.45 * gib, "1.45 GiB/s"},
		{12.3 * gib, "12.3 GiB/s"},
		{9.996 * gib, "10.0 GiB/s"},
		{99.97 * mib, "100 MiB/s"},
		{999.7 * mib, "0.98 GiB/s"},
	} {
		if got := rate(model.Figure(c.bps)); got != c.want {
			t.Errorf("rate(%.0f) = %q, want %q", c.bps, got, c.want)
		}
	}
	if got := rate(model.Unknown); got != na {
		t.Errorf("rate(unknown) = %q", got)
	}
	if got := rate(model.Figure(math.Inf(1))); got != na {
		t.Errorf("rate(+Inf) = %q", got)
	}
}

// TestHelpScrolls: at 80x24 the figures page is longer than the screen;
// it says so, and ↓/end bring the last figure into view. At 160x48 each
// page is in view, and neither runs past a screen and a bit.
func TestHelpScrolls(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("?", "tab")
	h.wantView("more lines", "↑/↓ scroll")
	if strings.Contains(h.view(), "markers") {
		t.Fatal("the whole help fits at 80x24? then this test tests nothing")
	}
	h.m.Update(tea.KeyMsg{Type: tea.KeyEnd})
	h.wantView("markers", "more lines above")
	checkFits(t, h.view(), 80, 24)
	h.m.Update(tea.KeyMsg{Type: tea.KeyHome})
	h.wantView("figures  page 2 of 2")
	h.press("tab")
	h.wantView("keys  page 1 of 2")
	// At 160x48 each page shows whole, and is at most a screen.
	h = newHarness(t, Options{}, 160, 48)
	h.press("?")
	h.wantView("keys  page 1 of 2", "connections")
	if lines := len(h.m.helpLines(160)); lines > 48 {
		t.Errorf("the keys page is %d lines at 160 columns: more than a screen", lines)
	}
	h.press("tab")
	h.wantView("EAGAIN", "consume")
	h.m.Update(tea.KeyMsg{Type: tea.KeyEnd})
	h.wantView("markers")
	if lines := len(h.m.helpLines(160)); lines > 48 {
		t.Errorf("the figures page is %d lines at 160 columns: more than a screen", lines)
	}
}

// TestPresetModifiedAtStart: flags on top of a preset make it modified
// from the start (the header says linux-gap*).
func TestPresetModifiedAtStart(t *testing.T) {
	base := model.DefaultConfig()
	base.Mode = model.ModeAlternate
	h := newHarness(t, Options{PresetName: "linux-gap", PresetConfig: &base}, 80, 24)
	h.wantView("preset linux-gap ")
	if strings.Contains(h.view(), "linux-gap*") {
		t.Error("unmodified preset marked modified")
	}
	other := base
	other.Sides[1].Connections = 4
	h = newHarness(t, Options{PresetName: "linux-gap", PresetConfig: &other}, 80, 24)
	h.wantView("preset linux-gap*")
}

// TestChartTitlesKeepFigures: at 80 columns, with more charts than fit,
// every chart's title still shows each series' figure (shorter titles,
// a shorter paging hint).
func TestChartTitlesKeepFigures(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.feed(40, 10)
	h.press("l")
	h.m.charts.page = 0 // l shows the latency chart first; these are the pages from throughput
	for page := 0; page < 4; page++ {
		first := true
		for _, l := range strings.Split(h.view(), "\n") {
			if !strings.Contains(l, "A ──") {
				continue
			}
			if strings.Contains(l, "…") {
				t.Errorf("page %d: title cut: %q", page, l)
			}
			if first && !strings.Contains(l, " v") {
				t.Errorf("page %d: no paging hint: %q", page, l)
			}
			first = false
		}
		checkFits(t, h.view(), 80, 24)
		h.press("v")
	}
}

// TestClampedFromSamples: the panel marks the buffers the engine judged
// clamped in the sample (engine's TestBuffersClamped), and judges none
// itself.
func TestClampedFromSamples(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	s := sample("B", 1, true)
	s.SndBuf.Clamped = true
	s.SndBuf.ServerRequested, s.SndBuf.ServerEffective = "8m", 8<<20
	s.SndBuf.ClientRequested, s.SndBuf.ClientEffective = "1m", 2<<20
	h.send(model.Update{Sample: &s})
	v := strings.Join(columnOf(h.view(), 80, 160), "\n")
	if !strings.Contains(v, "8m eff clamped") {
		t.Errorf("server sndbuf 8m → 8m not marked clamped:\n%s", v)
	}
	if strings.Contains(v, "2m eff clamped") {
		t.Errorf("client sndbuf 1m → 2m marked clamped:\n%s", v)
	}
}
