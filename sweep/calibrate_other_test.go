package sweep

import (
	"testing"

	"nbdscope/model"
)

// A calibration row carries the most CPU other processes took during any
// of its measurements, ours or the real client's.
func TestCalibrationRowsKeepOtherCPU(t *testing.T) {
	lo, hi := model.Figure(0.1), model.Figure(1.2)
	ours := [][]model.SweepRow{{{Buffer: "2m", Seconds: 1, OtherCoresBusy: &lo}}}
	real := [][]model.SweepRow{{{Buffer: "2m", Seconds: 2, OtherCoresBusy: &hi}}}
	rows := calibrationRows([]model.Buf{{Kind: model.BufSize, Bytes: 2 << 20}}, ours, real, 0.95)
	if len(rows) != 1 || rows[0].OtherCoresBusy == nil || *rows[0].OtherCoresBusy != hi {
		t.Fatalf("rows %+v: want other cores busy %v", rows, hi)
	}
}
