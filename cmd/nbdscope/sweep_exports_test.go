package main

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/report"
	"nbdscope/sweep"
)

// spreadCellsRE matches the table's last cells after GiB/s: the time's
// mean ± σ and min … max, to the end of the line.
const spreadCellsRE = ` [^|]* ± [^|]* \| [^|]* … [^|]* \|$`

// TestSweepExportsGolden: each of sweep's formats of one made-up sweep
// with three measurements a size, as written to stdout or a file.
func TestSweepExportsGolden(t *testing.T) {
	rep := madeUpSpreadSweep(8)
	for _, c := range []struct{ format, golden string }{
		{fmtJSON, "sweep.json"}, {fmtCSV, "sweep.csv"}, {fmtMarkdown, "sweep.md"}, {fmtText, "sweep.txt"},
	} {
		var b bytes.Buffer
		if err := writeSweepAs(c.format, &b, rep, 80); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		checkGolden(t, c.golden, b.String())
	}
}

// TestSweepOptimumNoise: a lead within the spread of the measurements
// names no winner, and says how many repeats would tell; a lead beyond it
// says by how much, with its interval.
func TestSweepOptimumNoise(t *testing.T) {
	tied := report.OptimumLine(madeUpSpreadSweep(8).Optimum)
	if !strings.HasPrefix(tied, "optimal: none clear — 1m, 2m") || !strings.Contains(tied, "are within noise of each other (1m/2m 1.04x ≈ [") ||
		!strings.Contains(tied, "repeats per size would tell") {
		t.Errorf("a lead within noise: %q", tied)
	}
	withDefault := madeUpSpreadSweep(8)
	withDefault.Rows[0].ThroughputBps = withDefault.Rows[2].ThroughputBps // default as fast as 1m
	withDefault.Rows[0].Measurements = withDefault.Rows[2].Measurements
	if l := report.OptimumLine(sweep.Optimum(withDefault.Rows)); !strings.HasPrefix(l, "optimal: none clear — default, 1m") || strings.Contains(l, "the default's") {
		t.Errorf("the default tied: %q", l)
	}
	clear := report.OptimumLine(madeUpSpreadSweep(1).Optimum)
	if !strings.HasPrefix(clear, "optimal: 1m (3.42 GiB/s, 2.40x [") || !strings.Contains(clear, "the next fastest (2m), beyond noise") {
		t.Errorf("a lead beyond noise: %q", clear)
	}
}

// TestRateUnit: --rate-unit shows every rate of the sweep's and the run's
// text in its unit; the JSON keeps bytes per second.
func TestRateUnit(t *testing.T) {
	defer setRateUnit("", false)
	if err := setRateUnit("gbit", true); err != nil {
		t.Fatal(err)
	}
	var sw, run, js bytes.Buffer
	if err := writeSweepAs(fmtText, &sw, madeUpSpreadSweep(8), 80); err != nil {
		t.Fatal(err)
	}
	if err := writeRunAs(fmtText, &run, madeUpRun(), "x"); err != nil {
		t.Fatal(err)
	}
	writeSweepAs(fmtJSON, &js, madeUpSpreadSweep(8), 80)
	for name, text := range map[string]string{"sweep": sw.String(), "run": run.String()} {
		if strings.Contains(text, "GiB/s") || !strings.Contains(text, "Gbit/s") {
			t.Errorf("%s with --rate-unit gbit:\n%s", name, text)
		}
	}
	if !strings.Contains(sw.String(), "| 1m (2m) | 0.292s |") || !strings.Contains(sw.String(), "| 29.4") || !strings.Contains(js.String(), `"throughput_bps": 3.677296413966555e+09`) {
		t.Errorf("1m's 3.42 GiB/s is 29.4 Gbit/s in the table, bytes per second in JSON:\n%s", sw.String())
	}
}
