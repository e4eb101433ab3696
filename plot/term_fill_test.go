package plot

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// fillRun is constRun whose side A's send buffer was full pct% of its
// samples.
func fillRun(pct model.Figure) model.Report {
	rep := constRun(1<<30, "2m")
	for i := range rep.Samples {
		rep.Samples[i].SetFill(model.Fill{Samples: 50, FullPct: pct, EmptyPct: 100 - pct, Bytes: 1000, Limit: 212992})
	}
	return rep
}

// TestCompareChartsFill (issue 24): runs compare draws how often each
// run's send buffer was full, run a light and run b heavy, each at its own
// height; runs without a fill sample keep the two charts they had.
func TestCompareChartsFill(t *testing.T) {
	out := Compare(Run{Name: "small", Report: fillRun(90)}, Run{Name: "big", Report: fillRun(10)}, 80)
	lines := strings.Split(out, "\n")
	title := "side A · " + fillTermTitle
	if !strings.Contains(out, title) {
		t.Fatalf("no fill chart:\n%s", out)
	}
	ra, rb := lineOf(lines, title, "─"), lineOf(lines, title, "━")
	if ra < 0 || rb < 0 || ra >= rb {
		t.Errorf("full 90%% (a) at line %d, 10%% (b) at line %d: want a above b:\n%s", ra, rb, out)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns at 80: %q", n, l)
		}
	}
	if plain := Compare(Run{Name: "x", Report: constRun(1<<30, "2m")}, Run{Name: "y", Report: constRun(1<<30, "64k")}, 80); strings.Contains(plain, "send buffer full") {
		t.Errorf("a fill chart without fill samples:\n%s", plain)
	}
}

// lineOf is the index of the first plot line under title holding glyph,
// -1 when none does.
func lineOf(lines []string, title, glyph string) int {
	in := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, title):
			in = true
		case in && !strings.Contains(l, "┤") && !strings.Contains(l, "┼"):
			return -1
		case in && strings.Contains(l, glyph):
			return i
		}
	}
	return -1
}
