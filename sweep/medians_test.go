package sweep

import (
	"testing"

	"nbdscope/model"
)

// A sweep's row carries the noisiest of its measurements, not the median
// one's: a row is as trustworthy as its worst.
func TestSweepRowKeepsWorstOther(t *testing.T) {
	runs := [][]model.SweepRow{{
		{Buffer: "2m", Seconds: 1, OtherCoresBusy: new(model.Figure(0.05))},
		{Buffer: "2m", Seconds: 2, OtherCoresBusy: new(model.Figure(0.6))},
		{Buffer: "2m", Seconds: 1.5},
	}}
	rows := sweepMedians(runs)
	if len(rows) != 1 || rows[0].Seconds != 1.5 || rows[0].OtherCoresBusy == nil || *rows[0].OtherCoresBusy != 0.6 {
		t.Fatalf("rows %+v", rows)
	}
	if got := worstOther([]model.ExecRun{{}, {}}, func(r model.ExecRun) *model.Figure { return r.OtherCoresBusy }); got != nil {
		t.Errorf("none measured: %v", *got)
	}
}
