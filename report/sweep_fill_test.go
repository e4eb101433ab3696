package report

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// A small sweep's measurements last milliseconds: its fill line said
// "1m 0/75" from four samples at 200 Hz, as if that were a share of a
// measurement; now a row under the verdict's minimum gives its count.
func TestSweepFillLineSaysFewSamples(t *testing.T) {
	rows := []model.SweepRow{{Buffer: "default"}, {Buffer: "1m"}}
	rows[0].Figures.SetFill(model.Fill{Samples: 400, FullPct: 67, EmptyPct: 17, Limit: 212992})
	rows[1].Figures.SetFill(model.Fill{Samples: 4, FullPct: 0, EmptyPct: 75, Limit: 4194304})
	got := sweepFillLine(rows)
	if !strings.Contains(got, "1m 0/75 (4 samples)") || strings.Contains(got, "400 samples") {
		t.Errorf("fill line %q, want 1m's 4 samples named and default's 400 not", got)
	}
	rows[1].Figures.SetFill(model.Fill{Samples: 1, FullPct: 0, EmptyPct: 100, Limit: 4194304})
	if one := sweepFillLine(rows); !strings.Contains(one, "1m 0/100 (1 sample)") {
		t.Errorf("fill line %q, want (1 sample)", one)
	}
	if !strings.Contains(got, "--bytes") {
		t.Errorf("fill line %q does not say how to get more samples", got)
	}
}

// TestSweepFillLineNamesSource: an exec sweep's fill line says what
// measured its runs' fill.
func TestSweepFillLineNamesSource(t *testing.T) {
	rows := []model.SweepRow{{Buffer: "default", Exec: &model.ExecRow{Runs: []model.ExecRun{{FillSource: model.FillSourceKernel}}}}}
	rows[0].Figures.SetFill(model.Fill{Samples: 400, FullPct: 67, EmptyPct: 17, Limit: 212992})
	if got := sweepFillLine(rows); !strings.Contains(got, "(full/empty % of the time, measured in the kernel)") {
		t.Errorf("fill line %q does not say the kernel measured it", got)
	}
	rows[0].Exec.Runs = append(rows[0].Exec.Runs, model.ExecRun{FillSource: model.FillSourceSampler})
	if got := sweepFillLine(rows); !strings.Contains(got, "some sampled") {
		t.Errorf("fill line %q does not say the runs differ", got)
	}
}
