package plot

import (
	"math"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/platform"
	"nbdscope/sweep"
)

// execSweep is a saved exec sweep of qemu-img over four sizes, three runs
// each: 64k the slowest, 2m the fastest and 4m within 5% of it.
func execSweep() model.Report {
	spec := model.SweepSpec{Bytes: 1 << 30, Repeat: 3, Setting: model.SetSndBuf,
		Exec: &model.ExecSpec{Command: "qemu-img convert -f raw -O raw {uri} /dev/null", Warmup: 1}}
	cfg := model.DefaultConfig()
	cfg.Sides[0].Backend = "null"
	row := func(buf string, eff int, secs, lo, hi float64) model.SweepRow {
		r := model.SweepRow{Buffer: buf, Effective: eff, Seconds: secs, Repeats: 3,
			ThroughputBps: model.Figure(float64(spec.Bytes) / secs),
			Exec:          &model.ExecRow{SecondsMin: lo, SecondsMax: hi, Runs: make([]model.ExecRun, 3)}}
		r.Figures.Settings.Workload = model.WorkRead
		r.Figures.Server = &model.Process{SendCallsPer2MiB: model.Figure(8 / secs)}
		r.Figures.Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
		quiet := model.Figure(0.02)
		r.OtherCoresBusy = &quiet
		return r
	}
	rows := []model.SweepRow{row("default", 212992, 2.0, 1.9, 2.3), row("64k", 131072, 2.7, 2.4, 3.2),
		row("2m", 4<<20, 1.0, 0.95, 1.1), row("4m", 8<<20, 1.04, 1.0, 1.3)}
	sw := model.SweepReport{Version: model.SweepVersion, Nbdscope: "test", Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Spec: spec, Config: cfg, Rows: rows, Optimum: sweep.Optimum(rows)}
	return model.Report{Sweep: &sw, Platform: platform.Facts{OS: "linux", Arch: "amd64", Kernel: "Linux 6.1.0", Cores: 2}}
}

// bars returns a bar chart's bars by buffer.
func barsOf(t *testing.T, root node, figure string) (node, map[string]node) {
	t.Helper()
	for _, c := range root.all("g", "bar-chart") {
		if c.attr("data-figure") == figure {
			out := map[string]node{}
			for _, b := range c.all("g", "bar") {
				out[b.attr("data-buffer")] = b
			}
			return c, out
		}
	}
	t.Fatalf("no %s chart", figure)
	return node{}, nil
}

// A sweep draws a bar per size of its median time, min–max whiskers, the
// fastest marked and the near-fastest coloured, on an axis whose ticks
// put each bar's top at its value; the title and subtitle say what was
// swept with which command.
func TestSweepSVGDrawsTimePerSize(t *testing.T) {
	rep := execSweep()
	doc := SweepSVG("qemu", rep)
	root := parseSVG(t, doc)
	chart, bars := barsOf(t, root, "time")
	if len(bars) != 4 {
		t.Fatalf("%d bars, want 4", len(bars))
	}
	scale := valueScale(t, chart)
	for _, r := range rep.Sweep.Rows {
		b := bars[r.Buffer]
		rect := b.all("rect", "")
		if len(rect) != 1 {
			t.Fatalf("bar %s: %d rects", r.Buffer, len(rect))
		}
		if got := scale(num(t, rect[0].attr("y"))); math.Abs(got-r.Seconds) > 0.01 {
			t.Errorf("bar %s reaches %.3f s, want %.3f", r.Buffer, got, r.Seconds)
		}
		w := b.all("g", "whisker")
		if len(w) != 1 {
			t.Fatalf("bar %s: no whisker", r.Buffer)
		}
		line := w[0].all("line", "")[0]
		lo, hi := scale(num(t, line.attr("y1"))), scale(num(t, line.attr("y2")))
		if math.Abs(lo-r.Exec.SecondsMin) > 0.01 || math.Abs(hi-r.Exec.SecondsMax) > 0.01 {
			t.Errorf("whisker %s spans %.3f–%.3f, want %.3f–%.3f", r.Buffer, lo, hi, r.Exec.SecondsMin, r.Exec.SecondsMax)
		}
	}
	if bars["2m"].attr("data-best") != "true" || len(bars["2m"].all("text", "best")) != 1 || bars["default"].attr("data-best") != "false" {
		t.Error("the fastest size is not marked")
	}
	if fill := bars["4m"].all("rect", "")[0].attr("fill"); fill != barNearBest {
		t.Errorf("4m, within 5%% of the fastest, is drawn %s", fill)
	}
	text := root.text()
	for _, s := range []string{"nbdscope sweep qemu: time per server SO_SNDBUF size", "qemu-img convert -f raw -O raw {uri} /dev/null",
		"null backend, 1g export", "median of 3 runs after 1 warm-up", "placement split (client CPU 0, server CPU 1)",
		"platform: linux/amd64, Linux 6.1.0, 2 cores", "min–max of the runs", "wall time of one run of the command (s)",
		"eff. 4m", "0.50 GiB/s", "optimum: not judged — 2m is the fastest, 1.00 GiB/s, 2.00x the default's throughput; within 5%: 2m, 4m",
		"send calls per 2 MiB of payload, of the server", "other processes: at most 0.02 cores busy"} {
		if !strings.Contains(text, s) {
			t.Errorf("the sweep's SVG lacks %q", s)
		}
	}
	if _, calls := barsOf(t, root, "calls"); calls["2m"].attr("data-value") != "8" {
		t.Errorf("2m's send calls per 2 MiB: %q, want 8", calls["2m"].attr("data-value"))
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(doc, bad) {
			t.Errorf("the SVG contains %q", bad)
		}
	}
}

// A sweep of nbdscope's load kept only medians: no whiskers, and the
// legend says why; a sweep cut short says it is partial and which sizes
// had one run; slowed sizes are flagged; an unmeasured size reads n/a.
func TestSweepSVGSaysWhatItLacks(t *testing.T) {
	rep := execSweep()
	sw := rep.Sweep
	sw.Spec.Exec = nil
	for i := range sw.Rows {
		sw.Rows[i].Exec = nil
		sw.Rows[i].Repeats = 2
	}
	sw.Rows[3].Repeats = 1
	sw.Rows[1].ThroughputBps, sw.Rows[1].Seconds = model.Unknown, 0
	noisy := model.Figure(1.5)
	sw.Rows[0].OtherCoresBusy = &noisy
	sw.Partial, sw.PartialReason = true, "interrupted after 7 of 8 measurements"
	root := parseSVG(t, SweepSVG("load", rep))
	_, bars := barsOf(t, root, "time")
	if len(root.all("g", "whisker")) != 0 {
		t.Error("whiskers drawn for a sweep that kept no min–max")
	}
	if v := bars["64k"].all("text", "value"); len(v) != 1 || v[0].text() != "n/a" || len(bars["64k"].all("rect", "")) != 0 {
		t.Error("an unmeasured size is not n/a")
	}
	text := root.text()
	for _, s := range []string{"no min–max: the sweep kept medians only", "partial sweep: interrupted after 7 of 8 measurements",
		"1 run", "1–2 measurements (the sweep stopped early)", "▲ default", "▲ slowed by other processes",
		"▲ other processes kept up to 1.50 cores busy during the measurements of default", "time to move 1 GiB (s)",
		"nbdscope's load: read over unix, 1 connection × 8 in flight × 2m requests"} {
		if !strings.Contains(text, s) {
			t.Errorf("the sweep's SVG lacks %q:\n%s", s, text)
		}
	}
	// The legend fits the document.
	for _, l := range root.all("g", "legend")[0].all("text", "") {
		if end := num(t, l.attr("x")) + textWidth(l.text(), 12); end > swW {
			t.Errorf("legend text %q ends at %.0f, past the width %d", l.text(), end, swW)
		}
	}
	// A report without a sweep still renders, saying nothing was measured.
	empty := parseSVG(t, SweepSVG("none", model.Report{}))
	if len(empty.all("text", "no-data")) != 2 || !strings.Contains(empty.text(), "optimum: n/a") {
		t.Error("an empty sweep does not say it has no data")
	}
}

// A sweep of our own load keeps every measurement now: its rows' min–max
// (hyperfine's summary, TimeS) are whiskers as an exec sweep's are.
func TestSweepSVGWhiskersOfOurLoad(t *testing.T) {
	rep := execSweep()
	sw := rep.Sweep
	sw.Spec.Exec = nil
	for i := range sw.Rows {
		r := &sw.Rows[i]
		r.Exec = nil
		s := r.Seconds
		r.SetSpread([]model.SweepMeasurement{{Seconds: s * 0.9}, {Seconds: s}, {Seconds: s * 1.2}})
	}
	root := parseSVG(t, SweepSVG("load", rep))
	if n := len(root.all("g", "whisker")); n != len(sw.Rows) {
		t.Fatalf("%d whiskers for %d rows of 3 measurements each", n, len(sw.Rows))
	}
	if strings.Contains(root.text(), "no min–max") {
		t.Error("the legend says there is no min–max")
	}
}
