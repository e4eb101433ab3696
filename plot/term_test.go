package plot

import (
	"strings"
	"testing"
	"unicode/utf8"

	"nbdscope/model"
)

// constRun is a run whose side A reads at rate bytes/s (8 recv calls per
// 2 MiB) for 8 s, one active sample per second, with a change at 4 s.
func constRun(rate float64, change string) model.Report {
	var rep model.Report
	rep.Config.Sides[0] = model.SideConfig{Name: "A", Workload: model.WorkRead}
	rep.Config.Sides[1] = model.SideConfig{Name: "B", Workload: model.WorkRead}
	for k := 1; k <= 8; k++ {
		rep.Samples = append(rep.Samples, model.Sample{T: float64(k), Side: "A", Active: true, Figures: model.Figures{Seconds: 1,
			ThroughputBps: model.Figure(rate), Client: model.Process{RecvCallsPer2MiB: 8}}})
	}
	rep.Events = []model.Event{{T: 4, Side: "A", Setting: "sndbuf", From: "default", To: change}}
	return rep
}

// rowOf returns the label of the chart row (under title) in which glyph
// appears, "" when it does not.
func rowOf(lines []string, title string, glyph string) (label string, found bool) {
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, title):
			in = true
			continue
		case in && !strings.Contains(l, "┤") && !strings.Contains(l, "┼"):
			return "", false
		case in && strings.Contains(l, glyph):
			return strings.TrimSpace(strings.FieldsFunc(l, func(r rune) bool { return r == '┤' || r == '┼' })[0]), true
		}
	}
	return "", false
}

func TestCompareDrawsBothRunsOnOneAxis(t *testing.T) {
	a := Run{Name: "small", Report: constRun(2<<30, "64k")}
	b := Run{Name: "big", Report: constRun(4<<30, "2m")}
	out := Compare(a, b, 80)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns in an 80-column terminal: %q", n, l)
		}
	}
	if !strings.Contains(lines[0], "── a: small") || !strings.Contains(lines[0], "━━ b: big") {
		t.Errorf("legend %q does not say which line is which run", lines[0])
	}
	// a at 2 GiB/s in light lines, b at 4 GiB/s in heavy ones, on a
	// scale labelled in GiB/s.
	title := "side A · throughput (GiB/s)"
	if !strings.Contains(out, title) {
		t.Fatalf("no chart %q in:\n%s", title, out)
	}
	if row, ok := rowOf(lines, title, "─"); !ok || row != "2" {
		t.Errorf("run a (──) drawn in row %q, want the row labelled 2:\n%s", row, out)
	}
	if row, ok := rowOf(lines, title, "━"); !ok || row != "4" {
		t.Errorf("run b (━━) drawn in row %q, want the row labelled 4:\n%s", row, out)
	}
	if !strings.Contains(out, "side A · receive calls per 2 MiB") {
		t.Errorf("no calls chart for side A:\n%s", out)
	}
	// Both changes are at 4 s: both are numbered on the time axis and
	// listed with their run.
	for _, s := range []string{"1  a   4.00s  sndbuf default→64k", "2  b   4.00s  sndbuf default→2m", "0s", "8s"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "┊") {
		t.Errorf("no change marker in the plot:\n%s", out)
	}
	// Side B has no samples in either run: it says so, without charts.
	if !strings.Contains(out, "side B: no active sample in either run") || strings.Contains(out, "side B · ") {
		t.Errorf("side B has nothing to chart and should say so:\n%s", out)
	}
}

func TestCompareWidth(t *testing.T) {
	a := Run{Name: "a", Report: constRun(1<<30, "64k")}
	for _, w := range []int{10, 40, 132} {
		out := Compare(a, a, w)
		want := max(w, minWidth)
		widest := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "└") {
				widest = max(widest, utf8.RuneCountInString(l))
			}
		}
		if widest != want-1 && widest != want {
			t.Errorf("width %d: time axis %d columns, want the width (%d)", w, widest, want)
		}
	}
}

func TestColumnsAverageSamplesAndLeaveGaps(t *testing.T) {
	sd := side{name: "A", workload: model.WorkRead, samples: []model.Sample{
		{T: 1, Active: true, Figures: model.Figures{Seconds: 1, ThroughputBps: 10}},
		{T: 2, Active: true, Figures: model.Figures{Seconds: 1, ThroughputBps: 30}},
		{T: 3, Active: false, Figures: model.Figures{Seconds: 0, ThroughputBps: 99}},
		{T: 4, Active: true, Figures: model.Figures{Seconds: 1, ThroughputBps: model.Unknown}},
	}}
	got := sd.columns(mThroughput, 4, 4, 1)
	// Column 0 is [0,1): sample 1; column 1 is [1,2): samples 1 and 2
	// touch it; 2 and 3: nothing known.
	if got[0] != 10 || got[1] != 20 || got[2] != 30 || got[3] == got[3] {
		t.Errorf("columns %v, want [10 20 30 NaN]", got)
	}
}

func TestCompareNamesAPartialRun(t *testing.T) {
	a := Run{Name: "cut", Report: constRun(1<<30, "64k")}
	a.Report.Partial, a.Report.PartialReason = true, "interrupted after 2.0s of 5s"
	out := Compare(a, Run{Name: "whole", Report: constRun(1<<30, "2m")}, 100)
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "a: cut (partial: interrupted") || strings.Contains(first, "whole (partial") {
		t.Errorf("legend %q", first)
	}
}
