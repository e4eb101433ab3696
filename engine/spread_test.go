package engine

import (
	"math"
	"testing"

	"nbdscope/model"
)

// TestSpreads: a side's spread is over its steady samples only (active,
// not warming, not mixing a change), and each segment's over its own.
func TestSpreads(t *testing.T) {
	small, big := model.Stamp{SndBuf: "default"}, model.Stamp{SndBuf: "2m"}
	smp := func(tt float64, side model.SideID, st model.Stamp, gib float64, recv model.Figure) model.Sample {
		s := model.Sample{T: tt, Side: side, Active: true}
		s.Settings, s.ThroughputBps = st, model.Figure(gib*model.GiB)
		s.Client.RecvCallsPer2MiB = recv
		return s
	}
	warming := smp(1, "A", small, 9, 99)
	warming.Warming = true
	idle := smp(2, "A", small, 9, 99)
	idle.Active = false
	mixed := smp(4, "A", big, 9, 99)
	mixed.Changed = true
	rep := model.Report{
		Samples: []model.Sample{warming, idle, smp(2, "A", small, 1, 10), smp(3, "A", small, 2, 20), mixed,
			smp(5, "A", big, 4, 5), smp(6, "A", big, 6, 7), smp(2, "B", small, 100, 1)},
		Sides: []model.SideReport{{Name: "A", Segments: []model.Segment{{From: 0, To: 3, Summary: model.Summary{Figures: model.Figures{Settings: small}}},
			{From: 4, To: 6, Summary: model.Summary{Figures: model.Figures{Settings: big}}}}}},
	}
	addSpreads(&rep)
	a := rep.Sides[0]
	if w := a.Summary.Spread.ThroughputBps; w.N != 4 || w.Mean != 3.25*model.GiB || w.Max != 6*model.GiB {
		t.Errorf("whole run: %+v", w)
	}
	s0, s1 := a.Segments[0].Spread, a.Segments[1].Spread
	if s0.ThroughputBps.N != 2 || s0.ThroughputBps.Mean != 1.5*model.GiB || s0.RecvCallsPer2MiB.Mean != 15 {
		t.Errorf("first segment: %+v", s0)
	}
	if s1.ThroughputBps.N != 2 || s1.ThroughputBps.Mean != 5*model.GiB || math.Abs(s1.ThroughputBps.Stddev-math.Sqrt2*model.GiB) > 1 || s1.RecvCallsPer2MiB.Median != 6 {
		t.Errorf("second segment: %+v", s1)
	}
}
