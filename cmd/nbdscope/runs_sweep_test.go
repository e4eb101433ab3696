package main

import (
	"encoding/xml"
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/sweep"
)

// runs export SWEEP --format svg draws the sweep (a bar per size, the
// fastest marked) instead of refusing it for having no series over time.
func TestRunsExportSweepSVG(t *testing.T) {
	storeCmdHome(t)
	rows := []model.SweepRow{{Buffer: "default", Seconds: 2, Repeats: 1, ThroughputBps: model.GiB / 2},
		{Buffer: "2m", Seconds: 0.8, Repeats: 1, ThroughputBps: 1.25 * model.GiB}}
	sw := model.SweepReport{Spec: model.SweepSpec{Bytes: 1 << 30, Repeat: 1}, Rows: rows, Optimum: sweep.Optimum(rows)}
	rep := storeCmdReport(1, 10)
	rep.Sides, rep.Samples, rep.Sweep = nil, nil, &sw
	saveTestRun(t, "sw", rep)
	code, out, errs := storeCmdRun(t, "", "runs", "export", "sw", "--format", "svg")
	if code != 0 {
		t.Fatalf("runs export --format svg of a sweep: exit %d: %s", code, errs)
	}
	if err := xml.Unmarshal([]byte(out), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	for _, want := range []string{"nbdscope sweep sw: time per server SO_SNDBUF size", `data-buffer="2m"`, `data-best="true"`, "optimum: not judged — 2m is the fastest"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sweep's SVG lacks %q", want)
		}
	}
	if strings.Contains(out, "no series") {
		t.Error("the SVG still says the sweep has no series")
	}
}
