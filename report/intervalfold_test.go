package report

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestIntervalFolderSeconds: 250 ms samples fold into 1-s lines whose
// throughput is the one accumulator's (model.Figures.Add: bytes over
// active seconds), a sample ending a few ms past the second counted in the
// second it covers; a side's idle stretch is one line however many
// samples it spans; a change ends its side's line. Before, each sample was
// a line (4 a second), half of them "idle" in alternate mode.
func TestIntervalFolderSeconds(t *testing.T) {
	f := NewIntervalFolder(1, 0.25)
	active := func(at float64, mib uint64) model.Sample {
		s := model.Sample{T: at, Side: "B", Active: true}
		s.Bytes, s.Seconds = mib<<20, 0.25
		s.ThroughputBps = model.Throughput(s.Bytes, s.Seconds)
		return s
	}
	idle := func(at float64) model.Sample { return model.Sample{T: at, Side: "B"} }
	var lines []string
	for _, s := range []model.Sample{
		active(0.25, 100), active(0.5, 200), active(0.75, 300), active(1.003, 424), // 1 GiB in 1 s
		active(1.25, 50), // 200 MiB/s, then idle
		idle(1.5), idle(1.75), idle(2), idle(2.25), idle(2.5),
		active(2.75, 25),
	} {
		lines = append(lines, f.Sample(s)...)
	}
	lines = append(lines, f.Flush("B")...) // a change of B
	want := []string{
		"[B]  0.00-1.00 s     1.00 GiB/s",
		"[B]  1.00-1.25 s     200 MiB/s",
		"[B]  1.25-2.50 s     idle (paused, or not its turn)",
		"[B]  2.50-2.75 s     100 MiB/s",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n%s\nwant it to begin %q", i, lines[i], w)
		}
	}
	if more := f.Flush(model.WholePair); len(more) != 0 {
		t.Errorf("lines after the flush: %q", more)
	}
}

// TestIntervalFolderPerSample: with -i (Width 0) every active sample is
// its line at once; idle samples still fold into one line per stretch.
func TestIntervalFolderPerSample(t *testing.T) {
	f := NewIntervalFolder(0, 0.25)
	s := model.Sample{T: 0.25, Side: "A", Active: true}
	s.Bytes, s.Seconds = 1<<20, 0.25
	if got := f.Sample(s); len(got) != 1 || !strings.HasPrefix(got[0], "[A]  0.00-0.25 s") {
		t.Errorf("an active sample gave %q, want its line at once", got)
	}
	var got []string
	for _, at := range []float64{0.5, 0.75, 1} {
		got = append(got, f.Sample(model.Sample{T: at, Side: "A"})...)
	}
	got = append(got, f.Flush(model.WholePair)...)
	if len(got) != 1 || !strings.HasPrefix(got[0], "[A]  0.25-1.00 s     idle") {
		t.Errorf("three idle samples gave %q, want one line 0.25-1.00 s", got)
	}
}
