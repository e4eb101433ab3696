package phrase

import (
	"slices"
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/stats"
)

// measuredRow is a sweep row of one size measured at each of gibps GiB/s.
func measuredRow(buf string, gibps ...float64) model.SweepRow {
	ms := make([]model.SweepMeasurement, len(gibps))
	for i, g := range gibps {
		ms[i] = model.SweepMeasurement{Seconds: 1 / g, ThroughputBps: model.Figure(g * model.GiB)}
	}
	sorted := slices.Clone(gibps)
	slices.Sort(sorted)
	r := model.SweepRow{Buffer: buf, ThroughputBps: model.Figure(sorted[len(sorted)/2] * model.GiB), Repeats: len(gibps)}
	r.SetSpread(ms)
	return r
}

// TestOptimumWords: each kind of the optimum verdict is worded as every
// output shows it: two sizes 100 ± 10 and 110 ± 10 MB/s, three repeats
// each, none clear with the nine repeats that would tell (model's
// TestRepeatsThatWouldTell); a clear lead names the size and its ratio
// to the default; one repeat is not judged, and says why.
func TestOptimumWords(t *testing.T) {
	tied := model.OptimumOf([]model.SweepRow{measuredRow("1m", 0.090, 0.100, 0.110), measuredRow("2m", 0.100, 0.110, 0.120)})
	clear := model.OptimumOf([]model.SweepRow{measuredRow("default", 1.4, 1.42, 1.44), measuredRow("1m", 3.40, 3.41, 3.42)})
	once := model.OptimumOf([]model.SweepRow{measuredRow("default", 1.4), measuredRow("1m", 3.4)})
	never := &model.SweepOptimum{Buffer: "1m", Verdict: model.OptimumVerdict{Kind: model.OptimumNoneClear, Repeats: stats.TellNever}}
	for _, c := range []struct {
		name        string
		o           *model.SweepOptimum
		said, short string
	}{
		{"none clear", tied, "none clear — 1m, 2m are within noise of each other (2m/1m ", "optimum none clear (9 repeats would tell)"},
		{"clear", clear, "1m, 2.40x [", "optimum 1m (2.40x ["},
		{"one repeat", once, "not judged — 1m is the fastest; " + OptimumUnjudgedWhy, "fastest 1m (not judged: 1 repeat)"},
		{"never", never, "no number of repeats up to", "optimum none clear (within noise)"},
		{"no payload", nil, "n/a (no size moved any payload)", "optimum n/a"},
	} {
		if s := OptimumSaid(c.o); !strings.Contains(s, c.said) {
			t.Errorf("%s: said %q, want %q", c.name, s, c.said)
		}
		if s := OptimumShort(c.o); !strings.HasPrefix(s, c.short) {
			t.Errorf("%s: short %q, want %q", c.name, s, c.short)
		}
	}
	if s := OptimumSaid(tied); !strings.HasSuffix(s, "; about 9 repeats per size would tell") {
		t.Errorf("none clear: %q", s)
	}
}
