package sweep

import (
	"math"
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
