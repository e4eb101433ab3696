package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/model"
)

// A side whose server figures leave out samples of a shared --target says
// over how much payload they are, and why: a turn switch that could not be
// read between the loads (the switches themselves are read, and split);
// in concurrent mode, where both always run, they are n/a. A side whose
// every sample was attributed says nothing.
func TestPrintUnattributed(t *testing.T) {
	srv := model.ProcessFigures(model.Counters{}, 3<<30, 1)
	rep := model.Report{Sides: []model.SideReport{
		{Name: "A", Summary: model.Summary{Figures: model.Figures{Bytes: 4 << 30, Seconds: 4, Server: &srv,
			ServerUnattributed: 2, ServerBytes: 3 << 30, ServerSeconds: 3}}},
		{Name: "B", Summary: model.Summary{Figures: model.Figures{Bytes: 4 << 30, Seconds: 4, ServerUnattributed: 16, ServerNA: &model.Reason{Kind: model.ReasonSharedServer}}}},
		{Name: "C", Summary: model.Summary{Figures: model.Figures{Bytes: 4 << 30, Seconds: 4, Server: &srv}}},
	}}
	var b bytes.Buffer
	printUnattributed(&b, rep)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want A's and B's:\n%s", len(lines), b.String())
	}
	if a := lines[0]; !strings.HasPrefix(a, "server A: over 3 GiB of 4 GiB (3.0 of 4.0 s of load)") ||
		!strings.Contains(a, "in the 2 samples in which both loads ran (a turn switch not read between them") || strings.Contains(a, "turn boundaries") {
		t.Errorf("A's line %q: want the base, the 2 samples and why they were not split", a)
	}
	if b := lines[1]; !strings.HasPrefix(b, "server B: n/a") || !strings.Contains(b, "concurrent mode") {
		t.Errorf("B's line %q: want n/a in concurrent mode", b)
	}
}

// The summary says what measured each side's fill, and why: the kernel
// by default, the sampler in its place where the programs do not measure
// (a TCP side, or programs that could not load), or the sampler asked for.
func TestFillSourceLine(t *testing.T) {
	rep := model.Report{Sides: []model.SideReport{{Name: "A", FillSource: model.FillSourceSampler}, {Name: "B", FillSource: model.FillSourceKernel}}}
	var b bytes.Buffer
	printFillSource(&b, rep)
	if got := b.String(); !strings.Contains(got, "fill A: sampled from user space, 100 times a second (the kernel's programs do not measure it here") ||
		!strings.Contains(got, "fill B: measured in the kernel") {
		t.Errorf("default: %q", got)
	}
	rep.Config.Fill = model.FillSourceSampler
	b.Reset()
	printFillSource(&b, rep)
	if got := b.String(); !strings.Contains(got, "(asked for with --fill-source sampler)") {
		t.Errorf("sampler asked: %q", got)
	}
}
