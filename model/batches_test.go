package model

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// turnsReport is a run of side A at the default 250 ms interval whose
// turns' samples moved the given MiB each (a turn: 4 samples of 0.25 s,
// then one off-turn sample); concurrent runs the samples back to back.
func turnsReport(concurrent bool, turns ...[]float64) Report {
	rep := Report{Config: Config{Interval: Duration(250 * time.Millisecond)}, Sides: []SideReport{{Name: "A"}}}
	var sum Figures
	t := 0.0
	for _, turn := range turns {
		for _, mib := range turn {
			f := Figures{Seconds: 0.25, Bytes: uint64(mib * (1 << 20))}
			f.ThroughputBps = Throughput(f.Bytes, f.Seconds)
			rep.Samples = append(rep.Samples, Sample{T: t, Side: "A", Active: true, Figures: f})
			sum = sum.Add(f)
			t += 0.25
		}
		if !concurrent {
			rep.Samples = append(rep.Samples, Sample{T: t, Side: "A"})
			t += 0.25
		}
	}
	rep.Sides[0].Summary.Figures = sum
	return rep
}

// TestBatchesAreTurns: in alternate mode a batch is a turn, its figure
// the turn's bytes over its seconds; a stretch shorter than half a turn
// is left out; the mean is the side's own figure over the run.
func TestBatchesAreTurns(t *testing.T) {
	thr := func(sm Summary) Figure { return sm.ThroughputBps }
	rep := turnsReport(false, []float64{100, 100, 100, 100}, []float64{200, 200, 200, 200}, []float64{300, 300, 300, 300}, []float64{50})
	s := BatchesOf(rep, "A", thr)
	mib := float64(1 << 20)
	// turns of 400, 800 and 1200 MiB/s: σ 400 MiB/s; the 50 MiB sample
	// alone is a quarter of a turn, left out.
	if s.N != 3 || math.Abs(s.Stddev-400*mib) > 1 || s.Mean != float64(rep.Sides[0].Summary.ThroughputBps) {
		t.Fatalf("%+v", s)
	}
	// Back to back (concurrent mode): the same 12 samples are 3 batches of
	// a second, the 13th alone left out.
	if c := BatchesOf(turnsReport(true, []float64{100, 100, 100, 100, 200, 200, 200, 200, 300, 300, 300, 300, 50}), "A", thr); c.N != 3 || math.Abs(c.Stddev-400*mib) > 1 {
		t.Fatalf("concurrent: %+v", c)
	}
	if none := BatchesOf(rep, "B", thr); none.N != 0 {
		t.Fatalf("no side B: %+v", none)
	}
}

// TestSidesDifferencesAreTheTables: the JSON's b_over_a holds, for each
// figure whose ratio means something, the verdict the B/A column prints
// (SidesDifference), keyed by its CSV column; a figure of no ratio has
// none, and an older run gains them when read.
func TestSidesDifferencesAreTheTables(t *testing.T) {
	a := turnsReport(false, []float64{100, 100, 100, 100}, []float64{110, 110, 110, 110}, []float64{90, 90, 90, 90})
	b := turnsReport(false, []float64{200, 200, 200, 200}, []float64{210, 210, 210, 210}, []float64{190, 190, 190, 190})
	rep := a
	rep.Sides = append(rep.Sides, SideReport{Name: "B", Summary: b.Sides[0].Summary})
	for _, s := range b.Samples {
		s.Side = "B"
		rep.Samples = append(rep.Samples, s)
	}
	got := SidesDifferences(rep)
	thr := func(s Summary) Figure { return s.ThroughputBps }
	want := SidesDifference(rep, thr)
	if d, ok := got["throughput_bps"]; !ok || d.Cell() != want.Cell() || !d.Known() || d.Ratio < 1.9 {
		t.Fatalf("b_over_a throughput %+v, want the table's %s", d, want.Cell())
	}
	if _, ok := got["client_user_s"]; ok {
		t.Error("user seconds have no meaningful ratio, yet b_over_a has one")
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(raw, &back); err != nil || back.BOverA["throughput_bps"].Cell() != want.Cell() {
		t.Errorf("read back: %v %+v", err, back.BOverA["throughput_bps"])
	}
}
