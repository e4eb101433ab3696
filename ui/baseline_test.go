package ui

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"nbdscope/model"
)

var baselineTime = time.Date(2026, 11, 22, 12, 0, 0, 0, time.Local)

// baselineReport is a saved 60-second run: A at 2.31 GiB/s, B at 3.5
// GiB/s, with an off-turn (inactive) sample now and then.
func baselineReport() model.Report {
	rep := model.Report{Time: baselineTime, Config: model.DefaultConfig()}
	for i := 1; i <= 240; i++ {
		tt := float64(i) * 0.25
		a, b := sample("A", tt, true), sample("B", tt, i%10 != 0)
		a.ThroughputBps = model.Figure(2.31 * (1 << 30))
		if b.Active {
			b.ThroughputBps = model.Figure(3.5 * (1 << 30))
		}
		rep.Samples = append(rep.Samples, a, b)
	}
	return rep
}

func testRuns() []RunItem {
	return []RunItem{
		{Name: "lastweek", Time: baselineTime, Preset: "linux-gap",
			Throughput: [2]model.Figure{model.Figure(2.31 * (1 << 30)), model.Figure(3.5 * (1 << 30))}},
		{Name: "broken", Time: baselineTime.Add(time.Hour), Throughput: [2]model.Figure{model.Unknown, model.Unknown}},
	}
}

func baselineOpts() Options {
	return Options{
		LoadRuns: func() ([]RunItem, error) { return testRuns(), nil },
		LoadRun: func(name string) (model.Report, error) {
			if name == "lastweek" {
				return baselineReport(), nil
			}
			return model.Report{}, errors.New("runs/" + name + ".json: invalid character '}' at line 3")
		},
	}
}

// pickBaseline opens the picker, picks the item at index sel and loads it.
func (h *harness) pickBaseline(sel int) {
	h.t.Helper()
	cmd := h.press("b")
	if h.m.state != stPicker || cmd == nil {
		h.t.Fatal("b did not open the run picker")
	}
	h.m.Update(cmd())
	for i := 0; i < sel; i++ {
		h.press("down")
	}
	if cmd = h.press("enter"); cmd != nil {
		h.m.Update(cmd())
	}
	h.m.Update(frameMsg{})
}

func TestKeyBaselinePicker(t *testing.T) {
	h := newHarness(t, baselineOpts(), 160, 48)
	h.feed(120, 30)
	cmd := h.press("b")
	if h.m.state != stPicker || !h.m.picker.runs || cmd == nil {
		t.Fatal("b did not open the run picker")
	}
	h.wantView("loading saved runs")
	h.m.Update(cmd())
	h.wantView("saved runs", "lastweek", "2026-11-22", "A 2.31 GiB/s · B 3.50 GiB/s", "preset linux-gap", "broken")
	if cmd = h.press("enter"); cmd == nil {
		t.Fatal("enter did not load the run")
	}
	if h.m.state != stNormal {
		t.Error("the picker stayed open")
	}
	h.m.Update(cmd())
	if h.m.charts.base == nil || h.m.charts.base.name != "lastweek" {
		t.Fatal("the baseline was not set")
	}
	h.m.Update(frameMsg{})
	// Legend (with the baseline's figure at the live run's 0:30), the
	// header and the dotted series.
	h.wantView("A' ┈┈ 2.31", "B' ┉┉ 3.50", "(baseline lastweek)", "baseline: lastweek (2026-11-22)")
	plot := strings.Join(columnOf(h.view(), 0, 160), "\n")
	if !strings.Contains(plot, "┈") || !strings.Contains(plot, "┉") {
		t.Errorf("no baseline series drawn:\n%s", h.view())
	}

	// b again offers to clear it, first in the list.
	h.openPicker("b")
	h.wantView("clear baseline", "stop drawing lastweek")
	h.press("up", "up", "enter")
	if h.m.charts.base != nil {
		t.Fatal("clear baseline did not clear it")
	}
	h.m.Update(frameMsg{})
	v := h.view()
	if strings.Contains(v, "baseline:") || strings.Contains(v, "A' ") || strings.Contains(v, "┈") {
		t.Errorf("the baseline is still drawn:\n%s", v)
	}
	h.wantView("baseline lastweek cleared")

	// B clears too; b closes the picker.
	h.pickBaseline(0)
	if h.m.charts.base == nil {
		t.Fatal("no baseline")
	}
	h.press("B")
	if h.m.charts.base != nil {
		t.Error("B did not clear the baseline")
	}
	h.openPicker("b")
	h.press("b")
	if h.m.state != stNormal {
		t.Error("b did not close the run picker")
	}
}

func TestBaselineUnavailable(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.wantUnavailable("b", "saved runs not available")
	h.press("B")
	h.wantView("no baseline shown")
}

func TestBaselineLoadErrors(t *testing.T) {
	// A broken run file: the error is shown, nothing is drawn.
	h := newHarness(t, baselineOpts(), 100, 30)
	h.feed(40, 10)
	h.pickBaseline(1)
	if h.m.charts.base != nil {
		t.Error("a broken run became the baseline")
	}
	h.wantView("✗ baseline broken: runs/broken.json: invalid")

	// The list fails: with no run, the picker closes with the error;
	// with some, they are listed beside it.
	h = newHarness(t, Options{
		LoadRuns: func() ([]RunItem, error) { return nil, errors.New("runs/x.json: not JSON") },
		LoadRun:  func(string) (model.Report, error) { return baselineReport(), nil },
	}, 80, 24)
	h.openPicker("b")
	if h.m.state != stNormal {
		t.Error("picker stayed open")
	}
	h.wantView("runs/x.json: not JSON")
	h = newHarness(t, Options{
		LoadRuns: func() ([]RunItem, error) { return testRuns(), errors.New("runs/y.json: not JSON") },
		LoadRun:  func(string) (model.Report, error) { return baselineReport(), nil },
	}, 100, 30)
	h.openPicker("b")
	h.wantView("lastweek", "runs/y.json: not JSON")

	// No runs yet.
	h = newHarness(t, Options{
		LoadRuns: func() ([]RunItem, error) { return nil, nil },
		LoadRun:  func(string) (model.Report, error) { return model.Report{}, nil },
	}, 80, 24)
	h.openPicker("b")
	h.wantView("no saved runs yet")
}

// TestBaselineOddReports: a run with odd samples (NaN and infinite
// times, unknown sides, negative figures, no active sample) never panics.
func TestBaselineOddReports(t *testing.T) {
	odd := baselineReport()
	odd.Samples = append(odd.Samples,
		model.Sample{T: math.NaN(), Side: "A", Active: true},
		model.Sample{T: math.Inf(1), Side: "B", Active: true},
		model.Sample{T: 5, Side: "Z", Active: true, Figures: model.Figures{ThroughputBps: 1}},
		model.Sample{T: -3, Side: "A", Active: true, Figures: model.Figures{ThroughputBps: -5, Seconds: math.Inf(1)}},
		model.Sample{T: 1e12, Side: "B", Active: true, Figures: model.Figures{ThroughputBps: model.Unknown}})
	idle := model.Report{Samples: []model.Sample{sample("A", 1, false)}}
	for _, rep := range []model.Report{odd, idle, {}} {
		h := newHarness(t, Options{
			LoadRuns: func() ([]RunItem, error) { return testRuns(), nil },
			LoadRun:  func(string) (model.Report, error) { return rep, nil },
		}, 80, 24)
		h.feed(40, 10)
		h.pickBaseline(0)
		checkFits(t, h.view(), 80, 24)
	}
	h := newHarness(t, Options{
		LoadRuns: func() ([]RunItem, error) { return testRuns(), nil },
		LoadRun:  func(string) (model.Report, error) { return idle, nil },
	}, 80, 24)
	h.pickBaseline(0)
	h.wantView("no active samples")
	if h.m.charts.base != nil {
		t.Error("a run without active samples became the baseline")
	}
}

// TestBaselineAligned: a baseline sample at T is drawn in the column of
// the live run's T.
func TestBaselineAligned(t *testing.T) {
	rep := model.Report{Config: model.DefaultConfig()}
	for tt := 10.25; tt <= 20; tt += 0.25 {
		rep.Samples = append(rep.Samples, sample("A", tt, true))
	}
	b, ok := newBaseline("x", rep)
	if !ok {
		t.Fatal("no points")
	}
	// 60 s over 60 columns: one second a column.
	col := b.in(0, 0, 60).bucket(mTput, 0, 60, 60, 1)
	for c, v := range col {
		if want := c >= 10 && c <= 20; !math.IsNaN(v) != want {
			t.Errorf("column %d: %v", c, v)
		}
	}
	if p := b.at(0, 15); p == nil || p.t != 15 {
		t.Errorf("at(15) = %v", p)
	}
	if b.at(0, 5) != nil || len(b.hist[1].pts) != 0 {
		t.Error("points where the run has none")
	}
	// A scrolled window shows the baseline of the same times.
	if got := b.in(0, 15, 75).pts; len(got) == 0 || got[0].t < 15 {
		t.Errorf("in(15, 75) starts at %v", got[0].t)
	}
}

// TestBaselineFits: with a baseline every screen stays within the
// terminal, and without colour nothing emits escapes.
func TestBaselineFits(t *testing.T) {
	for _, prof := range []termenv.Profile{termenv.Ascii, termenv.TrueColor} {
		for _, sz := range [][2]int{{80, 24}, {160, 48}} {
			w, hgt := sz[0], sz[1]
			lipgloss.SetColorProfile(prof)
			h := newHarness(t, baselineOpts(), w, hgt)
			h.feed(240, 70) // scrolled: the window shows 10 s to 70 s
			h.pickBaseline(0)
			for _, keys := range [][]string{nil, {"l"}, {"v"}, {"tab"}} {
				h.press(keys...)
				h.m.Update(frameMsg{})
				v := h.view()
				checkFits(t, v, w, hgt)
				if n := len(strings.Split(v, "\n")); n != hgt {
					t.Errorf("%dx%d %v: %d lines", w, hgt, keys, n)
				}
				if prof == termenv.Ascii && strings.Contains(v, "\x1b") {
					t.Errorf("%dx%d: escape sequence without colour", w, hgt)
				}
				if !strings.Contains(ansi.Strip(v), "baseline: lastweek") {
					t.Errorf("%dx%d %v: no baseline in the header:\n%s", w, hgt, keys, v)
				}
			}
			h.m.Update(tea.WindowSizeMsg{Width: 40, Height: 12})
			checkFits(t, h.view(), 40, 12)
			lipgloss.SetColorProfile(termenv.Ascii)
		}
	}
}
