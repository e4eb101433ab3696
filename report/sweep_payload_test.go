package report

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestExecPayloadLine: an exec sweep whose client moved a sliver of the
// export (nbdinfo: 8 KiB of 64 MiB) says so, and that its figures per
// 2 MiB are scaled up; one that moved the export says nothing; a real
// server's assumed payload is not judged.
func TestExecPayloadLine(t *testing.T) {
	rep := func(bytes ...uint64) model.SweepReport {
		r := model.SweepReport{Spec: model.SweepSpec{Bytes: 64 << 20, Exec: &model.ExecSpec{Command: "nbdinfo {uri}"}}}
		for _, b := range bytes {
			row := model.SweepRow{Buffer: "2m", Exec: &model.ExecRow{Runs: []model.ExecRun{{}}}}
			row.Figures.Bytes = b
			r.Rows = append(r.Rows, row)
		}
		return r
	}
	got := execPayloadLine(rep(8<<10, 12<<10))
	for _, want := range []string{"moved 8 KiB to 12 KiB a run", "0.0122% of the 64 MiB export", "scaled up from less than 2 MiB"} {
		if !strings.Contains(got, want) {
			t.Errorf("a sliver: %q lacks %q", got, want)
		}
	}
	if got := execPayloadLine(rep(16<<20, 16<<20)); !strings.Contains(got, "25% of the 64 MiB export") || !strings.Contains(got, "is of that part") {
		t.Errorf("a quarter: %q", got)
	}
	if got := execPayloadLine(rep(64<<20, 32<<20)); got != "" {
		t.Errorf("the export and half of it: %q, want no line", got)
	}
	assumed := rep(8 << 10)
	assumed.Rows[0].Exec.Runs[0].PayloadAssumed = true
	if got := execPayloadLine(assumed); got != "" {
		t.Errorf("an assumed payload: %q, want no line", got)
	}
	ours := rep(8 << 10)
	ours.Spec.Exec = nil
	if got := execPayloadLine(ours); got != "" {
		t.Errorf("a sweep of our load: %q, want no line", got)
	}
}

// TestGiBNumberNeverZeroForSome: a rate that two decimals would print as
// 0.00 keeps three significant digits; 0 stays 0.00.
func TestGiBNumberNeverZeroForSome(t *testing.T) {
	for in, want := range map[float64]string{0: "0.00", 0.000563: "0.000563", 0.0049: "0.00490", 0.005: "0.01", 2.345: "2.35", 12.3: "12.30"} {
		if got := gibNumber(in); got != want {
			t.Errorf("gibNumber(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestPaceOfASliverNamesNoFaults: the pace line of a client that moved a
// sliver of the export does not put its page faults (its start-up's) down
// to buffers faulted in afresh; one that moved the export does.
func TestPaceOfASliverNamesNoFaults(t *testing.T) {
	for _, c := range []struct {
		bytes      uint64
		wantFaults bool
	}{{8 << 10, false}, {64 << 20, true}} {
		row := model.SweepRow{Buffer: "2m", Exec: &model.ExecRow{Runs: []model.ExecRun{{}}}}
		row.Figures.Bytes = c.bytes
		row.Figures.Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
		row.Figures.Client.CoresBusy, row.Figures.Client.FaultsPer2MiB = 0.97, 300000
		rep := model.SweepReport{Spec: model.SweepSpec{Bytes: 64 << 20, Exec: &model.ExecSpec{Command: "x"}},
			Rows: []model.SweepRow{row}, Optimum: &model.SweepOptimum{Buffer: "2m"}}
		got := paceLine(rep)
		if !strings.HasPrefix(got, "pace: at 2m") || strings.Contains(got, "faulting its buffers") != c.wantFaults {
			t.Errorf("%d bytes moved: %q, want the faults named: %v", c.bytes, got, c.wantFaults)
		}
	}
}
