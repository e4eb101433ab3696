package main

import (
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/sweep"
	"nbdscope/ui"
)

// TestRunsListShowsPartial: a saved partial run reads "partial: CAUSE" in
// 'runs list' and its reason in 'runs show'; a complete one "complete".
func TestRunsListShowsPartial(t *testing.T) {
	storeCmdHome(t)
	cut := storeCmdReport(1, 10)
	cut.Partial, cut.PartialReason = true, "interrupted after 2.0s of 5s"
	saveTestRun(t, "cut", cut)
	saveTestRun(t, "whole", storeCmdReport(1, 10))
	out := runsList(t)
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	if !strings.Contains(rows["NAME"], "STATUS") || !strings.HasSuffix(rows["cut"], "partial: interrupted after 2.0s of 5s") ||
		!strings.HasSuffix(rows["whole"], "complete") {
		t.Errorf("runs list:\n%s", out)
	}
	code, out, _ := storeCmdRun(t, "", "runs", "show", "cut")
	if code != 0 || !strings.Contains(out, "**partial run**: interrupted after 2.0s of 5s") {
		t.Errorf("runs show (exit %d):\n%s", code, out)
	}
}

// TestRunsListTellsSweeps: a saved sweep reads "sweep" and its optimum in
// 'runs list', not n/a for sides it does not have, and the explorer's
// baseline picker (b) leaves it out: it has no series over time to draw.
func TestRunsListTellsSweeps(t *testing.T) {
	storeCmdHome(t)
	rows := []model.SweepRow{{Buffer: "default", ThroughputBps: model.GiB}, {Buffer: "2m", ThroughputBps: 2.5 * model.GiB}}
	sw := model.SweepReport{Rows: rows, Optimum: sweep.Optimum(rows)}
	rep := storeCmdReport(1, 10)
	rep.Sides, rep.Samples, rep.Sweep = nil, nil, &sw
	saveTestRun(t, "sw", rep)
	saveTestRun(t, "run", storeCmdReport(1, 10))
	out := runsList(t)
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "sw ") {
			line = l
		}
	}
	// One measurement a size: the fastest, not judged against noise,
	// as the sweep's own optimum line says (phrase.OptimumShort).
	if f := strings.Fields(line); len(f) < 8 || f[4] != "sweep" || f[5] != "fastest" || f[6] != "2m" || f[7] != "(not" {
		t.Errorf("runs list row of a sweep %q:\n%s", line, out)
	}
	var o ui.Options
	testApp().tuiPresets(&o)
	items, err := o.LoadRuns()
	if err != nil || len(items) != 1 || items[0].Name != "run" {
		t.Errorf("baseline picker items %+v (%v), want the run only", items, err)
	}
}
