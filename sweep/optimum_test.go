package sweep

import (
	"reflect"
	"testing"

	"nbdscope/model"
)

// TestOptimum on a made-up sweep: the fastest row wins, the ratio is to
// the default row, and "within 5%" lists the rows at ≥ 95% of the best
// in sweep order.
func TestOptimum(t *testing.T) {
	row := func(buf string, gibps float64) model.SweepRow {
		return model.SweepRow{Buffer: buf, ThroughputBps: model.Figure(gibps * model.GiB)}
	}
	rows := []model.SweepRow{row("default", 1.425), row("64k", 0.8), row("256k", 2.9), row("1m", 3.42),
		row("2m", 3.30), row("4m", 3.25), row("8m", 3.2), {Buffer: "16m", ThroughputBps: model.Unknown}}
	o := Optimum(rows)
	if o == nil || o.Buffer != "1m" || o.ThroughputBps != rows[3].ThroughputBps {
		t.Fatalf("optimum %+v", o)
	}
	if got := float64(o.VsDefault); got < 2.399 || got > 2.401 {
		t.Errorf("vs default %.4f, want 2.4", got)
	}
	// 3.42 × 0.95 = 3.249: 2m and 4m are in, 8m (3.2) is not.
	if want := []string{"1m", "2m", "4m"}; !reflect.DeepEqual(o.Within5Pct, want) {
		t.Errorf("within 5%%: %v, want %v", o.Within5Pct, want)
	}
	// Without a default row the ratio is unknown; a tie goes to the first.
	o = Optimum([]model.SweepRow{row("64k", 2), row("1m", 2)})
	if o.Buffer != "64k" || o.VsDefault.Known() {
		t.Errorf("tie/no default: %+v", o)
	}
	if Optimum(nil) != nil || Optimum([]model.SweepRow{{Buffer: "x", ThroughputBps: model.Unknown}}) != nil {
		t.Error("optimum of no known throughput")
	}
}
