package sweep

import (
	"math"
	"slices"
	"testing"

	"nbdscope/model"
)

// rowOf is a row of a size whose measurements had the given model.GiB/s (1 model.GiB
// each), its median figures those of the median measurement.
func rowOf(buf string, gibps ...float64) model.SweepRow {
	var rs []model.SweepRow
	for _, g := range gibps {
		rs = append(rs, model.SweepRow{Buffer: buf, Seconds: 1 / g, ThroughputBps: model.Figure(g * model.GiB), ClientUserS: 0.1, ClientSysS: 0.2})
	}
	return sweepMedians([][]model.SweepRow{rs})[0]
}

// TestSweepRowKeepsEveryMeasurement: a row of our load keeps each
// repeat's time in the order measured, and hyperfine's summary of them,
// not only the median's.
func TestSweepRowKeepsEveryMeasurement(t *testing.T) {
	r := rowOf("2m", 2, 4, 1)
	if len(r.Measurements) != 3 || r.Measurements[0].Seconds != 0.5 || r.Measurements[1].Seconds != 0.25 || r.Measurements[2].Seconds != 1 {
		t.Fatalf("measurements %+v", r.Measurements)
	}
	s := r.TimeS
	if s == nil || s.N != 3 || s.Min != 0.25 || s.Max != 1 || s.Median != 0.5 || math.Abs(s.Mean-1.75/3) > 1e-12 || !(s.Stddev > 0) {
		t.Fatalf("time summary %+v", s)
	}
	if r.Seconds != 0.5 || r.Repeats != 3 {
		t.Fatalf("the row's own figures are the median measurement's: %v s, %d repeats", r.Seconds, r.Repeats)
	}
}

// TestOptimumNoise: a lead smaller than the spread names no winner (the
// sizes within noise of the fastest are tied); a larger one does; with a
// single measurement per size nothing is judged.
func TestOptimumNoise(t *testing.T) {
	for _, c := range []struct {
		name   string
		rows   []model.SweepRow
		known  bool
		within bool
		tied   []string
	}{
		{"close", []model.SweepRow{rowOf("default", 1.4, 1.42, 1.44), rowOf("1m", 3.40, 3.42, 3.44), rowOf("2m", 3.38, 3.41, 3.43)}, true, true, []string{"1m", "2m"}},
		{"far", []model.SweepRow{rowOf("default", 1.4, 1.42, 1.44), rowOf("1m", 3.40, 3.41, 3.42), rowOf("2m", 3.0, 3.01, 3.02)}, true, false, nil},
		{"one each", []model.SweepRow{rowOf("1m", 3.4), rowOf("2m", 3.0)}, false, false, nil},
		{"one size", []model.SweepRow{rowOf("1m", 3.4, 3.5)}, false, false, nil},
	} {
		o := Optimum(c.rows)
		n := o.Noise
		if n == nil || n.Known != c.known || n.Within != c.within || !slices.Equal(n.Tied, c.tied) {
			t.Errorf("%s: noise %+v, want known %v within %v tied %v", c.name, n, c.known, c.within, c.tied)
			continue
		}
		if c.known && (o.Buffer != "1m" || n.RunnerUp != "2m" || !(n.Lead > 0) || !(n.Noise > 0) || (n.Lead.Known() && float64(n.Lead) <= float64(n.Noise)) != c.within) {
			t.Errorf("%s: optimum %s, runner-up %s, lead %v, noise %v", c.name, o.Buffer, n.RunnerUp, n.Lead, n.Noise)
		}
	}
}
