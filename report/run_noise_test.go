package report

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// noiseReport is a run of two sides whose steady samples' throughput is
// a's and b's values.
func noiseReport(a, b []float64) model.Report {
	rep := model.Report{Sides: []model.SideReport{{Name: "A"}, {Name: "B"}}}
	add := func(side model.SideID, vs []float64) {
		var sum model.Figures
		for i, v := range vs {
			f := model.Figures{Seconds: 1, Bytes: uint64(v), ThroughputBps: model.Figure(v)}
			rep.Samples = append(rep.Samples, model.Sample{T: float64(i), Side: side, Active: true, Figures: f})
			sum = sum.Add(f)
		}
		rep.Sides[side.Index()].Summary.Figures = sum
	}
	add("A", a)
	add("B", b)
	return rep
}

// TestRatioCellCarriesSpread: a ratio cell carries the spread of the
// two sides' steady samples, marked ≈ when the difference is within it.
func TestRatioCellCarriesSpread(t *testing.T) {
	thr := func(sm model.Summary) model.Figure { return sm.ThroughputBps }
	within := noiseReport([]float64{100e6, 110e6, 90e6, 105e6}, []float64{104e6, 96e6, 112e6, 99e6})
	if c := spreadCell(within, thr); !strings.HasPrefix(c, " ≈ ±") {
		t.Errorf("overlapping samples: cell %q, want ≈ and the spread", c)
	}
	beyond := noiseReport([]float64{100e6, 101e6, 99e6}, []float64{200e6, 202e6, 198e6})
	if c := spreadCell(beyond, thr); c != " ±2.0%" {
		t.Errorf("B twice A with 1%% spread each: cell %q, want \" ±2.0%%\"", c)
	}
	if c := spreadCell(noiseReport([]float64{100e6}, []float64{200e6}), thr); c != "" {
		t.Errorf("one sample a side: cell %q, want none", c)
	}
}

// TestSpreadLegend: a summary whose B/A cells carry a spread says what ±
// means, and what ≈ means when a cell has it; one without says nothing.
func TestSpreadLegend(t *testing.T) {
	within := noiseReport([]float64{100e6, 110e6, 90e6, 105e6}, []float64{104e6, 96e6, 112e6, 99e6})
	if l := spreadLegend(SummaryTable(within)); !strings.Contains(l, "±") || !strings.Contains(l, "≈: B/A is within it") {
		t.Errorf("a table with a ≈ cell: legend %q", l)
	}
	beyond := noiseReport([]float64{100e6, 101e6, 99e6}, []float64{200e6, 202e6, 198e6})
	if l := spreadLegend(SummaryTable(beyond)); !strings.HasPrefix(l, "B/A ±") || strings.Contains(l, "≈") {
		t.Errorf("a table with spreads and no ≈: legend %q", l)
	}
	if l := spreadLegend(SummaryTable(noiseReport([]float64{100e6}, []float64{200e6}))); l != "" {
		t.Errorf("one sample a side, no spread: legend %q", l)
	}
}
