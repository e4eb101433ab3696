package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/sweep"
)

func TestSweepOutputsMadeUp(t *testing.T) {
	rep := reporttest.Sweep()
	var md bytes.Buffer
	SweepMarkdown(&md, rep)
	const want = "optimal: not judged — 1m is the fastest (3.42 GiB/s, 2.40x the default's); within 5%: 1m, 2m, 4m; " + phrase.OptimumUnjudgedWhy
	if !strings.Contains(md.String(), "\n"+want+"\n") {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	if !strings.Contains(md.String(), "| buffer size | time | client user | client system | server user | server system | calls per 2 MiB | EAGAIN per 2 MiB | CPU wait client/server | GiB/s |") ||
		!strings.Contains(md.String(), "| 1m (2m) | 0.292s | 0.100s | 0.200s | 0.050s | 0.300s | 12.5 | 3.0 | 0.00/n/a | 3.42 |") {
		t.Errorf("markdown table:\n%s", md.String())
	}

	var bars bytes.Buffer
	sweepBars(&bars, rep, 60)
	lines := strings.Split(strings.TrimRight(bars.String(), "\n"), "\n")
	if lines[0] != "GiB/s by server send buffer (swept: default, 64k, 1m, 2m, 4m, 8m)" || len(lines) != 7 {
		t.Fatalf("bars:\n%s", bars.String())
	}
	full := strings.Count(lines[3], "█") // 1m, the fastest, fills the room
	for i, l := range lines[1:] {
		if w := len([]rune(l)); w != 60 {
			t.Errorf("bar line %d is %d wide, want the width 60: %q", i, w, l)
		}
		if !strings.HasSuffix(l, rateNumber(rep.Rows[i].ThroughputBps)) {
			t.Errorf("bar %q not labelled with its GiB/s", l)
		}
	}
	if half := strings.Count(lines[2], "█"); full == 0 || half < full*8/34-1 || half > full*8/34+1 {
		t.Errorf("64k bar %d cells vs 1m %d: want the ratio 0.8/3.42", half, full)
	}

	var c bytes.Buffer
	if err := SweepCSV(&c, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 7 {
		t.Fatalf("csv: %v\n%s", err, c.String())
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var within []string
	for _, r := range recs[1:] {
		if r[col["optimal"]] == "true" && r[col["buffer"]] != "1m" {
			t.Errorf("csv optimal row %v", r)
		}
		if r[col["within_5pct"]] == "true" {
			within = append(within, r[col["buffer"]])
		}
	}
	if strings.Join(within, ",") != "1m,2m,4m" || recs[3][col["x_default"]] != "2.400" {
		t.Errorf("csv optimum columns: within %v, x_default %q", within, recs[3][col["x_default"]])
	}
}

func TestOptimumLineCases(t *testing.T) {
	for _, c := range []struct {
		rows []model.SweepRow
		want string
	}{
		{[]model.SweepRow{{Buffer: "default", ThroughputBps: 0}, {Buffer: "64k", ThroughputBps: 0}}, "optimal: n/a (no size moved any payload)"},
		{[]model.SweepRow{{Buffer: "default", ThroughputBps: 2 * model.GiB}, {Buffer: "64k", ThroughputBps: model.GiB}},
			"optimal: not judged — default is the fastest (2.00 GiB/s, the default); within 5%: default; " + phrase.OptimumUnjudgedWhy},
		{[]model.SweepRow{{Buffer: "64k", ThroughputBps: model.GiB}, {Buffer: "1m", ThroughputBps: 1.5 * model.GiB}},
			"optimal: not judged — 1m is the fastest (1.50 GiB/s; the default was not swept); within 5%: 1m; " + phrase.OptimumUnjudgedWhy},
		{nil, "optimal: n/a (no size moved any payload)"},
	} {
		if got := OptimumLine(sweep.Optimum(c.rows)); got != c.want {
			t.Errorf("OptimumLine = %q, want %q", got, c.want)
		}
	}
}

// TestPaceLineCases: the line under the optimum names the process that used
// all of the CPU it was held to, with its figure at the default, or says
// that neither did, or that nothing is claimed for processes not held.
func TestPaceLineCases(t *testing.T) {
	row := func(buf string, gibps, client, server float64, place model.Placement) model.SweepRow {
		r := model.SweepRow{Buffer: buf, ThroughputBps: model.Figure(gibps) * model.GiB}
		r.Figures.Client.CoresBusy = model.Figure(client)
		r.Figures.Server = &model.Process{CoresBusy: model.Figure(server)}
		r.Placement = place
		return r
	}
	faulty := func(r model.SweepRow, faults model.Figure) model.SweepRow {
		r.Figures.Client.FaultsPer2MiB = faults
		return r
	}
	split := model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
	shared := model.Placement{Setting: model.PlaceShared, LoadCPUs: "0", ServerCPUs: "0"}
	os := model.Placement{Setting: model.PlaceOS, LoadCPUs: "any", ServerCPUs: "any"}
	for _, c := range []struct {
		rows []model.SweepRow
		want string
	}{
		{[]model.SweepRow{row("default", 3, 0.86, 0.69, split), row("2m", 4.3, 0.99, 0.56, split)},
			"pace: at 2m the client used all of its 1 core (0.99 cores busy; 0.86 at default): its own work, not waiting, sets the pace here"},
		{[]model.SweepRow{row("default", 3, 0.5, 0.7, split), row("2m", 4.3, 0.6, 0.95, split)},
			"pace: at 2m the server used all of its 1 core (0.95 cores busy; 0.70 at default): its own work, not waiting, sets the pace here"},
		{[]model.SweepRow{row("default", 3, 0.5, 0.5, shared), row("2m", 4, 0.6, 0.38, shared)},
			"pace: at 2m client and server together used all of the 1 core they share (0.98 cores busy; 1.00 at default): their work, not waiting, sets the pace here"},
		{[]model.SweepRow{row("64k", 3, 0.5, 0.4, split), row("2m", 4, 0.6, 0.5, split)},
			"pace: at 2m client 0.60, server 0.50 cores busy: neither used all of its CPU; the rest of the time they waited on each other"},
		{[]model.SweepRow{row("default", 3, 0.77, 0.56, os), row("2m", 4, 0.93, 0.4, os)},
			"pace: at 2m client 0.93 (0.77 at default), server 0.40 (0.56 at default) cores busy (not held to cores, so no bound is claimed)"},
		{[]model.SweepRow{row("default", 0.3, 0.95, 0.1, split), faulty(row("2m", 0.32, 0.99, 0.1, split), 512)},
			"pace: at 2m the client used all of its 1 core (0.99 cores busy; 0.95 at default): its own work, not waiting, sets the pace here; " +
				"it took 512 page faults per 2 MiB, faulting its buffers in afresh, and where a fault is dear (a VM) that can be most of its work"},
		{nil, ""},
	} {
		rep := model.SweepReport{Rows: c.rows, Optimum: sweep.Optimum(c.rows)}
		if got := paceLine(rep); got != c.want {
			t.Errorf("paceLine =\n%q, want\n%q", got, c.want)
		}
	}
}

// TestRunNotesPace: run prints what set each side's pace from its summary
// (the same words as a sweep's), and none for a side whose settings
// changed during the run (its figures mix two paces).
func TestRunNotesPace(t *testing.T) {
	side := func(name, buf string, client, server model.Figure, changed bool) model.SideReport {
		var s model.Summary
		s.Settings.SndBuf, s.Changed = buf, changed
		s.Client.CoresBusy, s.Client.FaultsPer2MiB = client, 0.1
		s.Server = &model.Process{CoresBusy: server}
		s.Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
		return model.SideReport{Name: name, Summary: s}
	}
	var b bytes.Buffer
	printRunNotes(&b, model.Report{Sides: []model.SideReport{side("A", "default", 0.88, 0.78, false), side("B", "2m", 0.98, 0.8, false)}})
	for _, want := range []string{
		"pace A (default): client 0.88, server 0.78 cores busy: neither used all of its CPU; the rest of the time they waited on each other\n",
		"pace B (2m): the client used all of its 1 core (0.98 cores busy): its own work, not waiting, sets the pace here\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("run notes lack %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printRunNotes(&b, model.Report{Sides: []model.SideReport{side("A", "default", 0.88, 0.78, true)}})
	if strings.Contains(b.String(), "pace") {
		t.Errorf("a side with changes got a pace line:\n%s", b.String())
	}
	// Other processes took the cores: said, and no pace is judged; a
	// quiet machine is said to be quiet.
	noisy := model.Report{Sides: []model.SideReport{side("B", "2m", 0.5, 0.4, false)}, OtherCoresBusy: new(model.Figure(1.28))}
	noisy.Platform.Cores = 2
	b.Reset()
	printRunNotes(&b, noisy)
	if !strings.Contains(b.String(), "▲ other processes kept 1.28 cores busy on average during the run (of 2)") || strings.Contains(b.String(), "pace B") {
		t.Errorf("a noisy run's notes:\n%s", b.String())
	}
	noisy.OtherCoresBusy = new(model.Figure(0.03))
	b.Reset()
	printRunNotes(&b, noisy)
	if !strings.Contains(b.String(), "other processes: 0.03 cores busy on average during the run (quiet)") || !strings.Contains(b.String(), "pace B") {
		t.Errorf("a quiet run's notes:\n%s", b.String())
	}
}

// TestSegmentsPace: a run with a change prints what set the pace of each
// stretch of the side that changed: work at 2m, waiting at 64k.
func TestSegmentsPace(t *testing.T) {
	seg := func(from, to float64, buf string, client, server model.Figure) model.Segment {
		var g model.Segment
		g.From, g.To = from, to
		g.Settings.SndBuf = buf
		g.Client.CoresBusy = client
		g.Server = &model.Process{CoresBusy: server}
		g.Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
		return g
	}
	rep := model.Report{Sides: []model.SideReport{{Name: "B", Segments: []model.Segment{
		seg(0, 3.8, "2m", 1.04, 0.6), seg(4, 8, "64k", 0.83, 0.57)}}}}
	var b bytes.Buffer
	printSegments(&b, rep)
	for _, want := range []string{
		"pace B 0.0–3.8 s (2m): the client used all of its 1 core (1.04 cores busy): its own work, not waiting, sets the pace here\n",
		"pace B 4.0–8.0 s (64k): client 0.83, server 0.57 cores busy: neither used all of its CPU; the rest of the time they waited on each other\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("segments lack %q:\n%s", want, b.String())
		}
	}
}

// TestSweepOtherCPU: a sweep says how much other processes took during its
// measurements, names the rows they slowed, and judges no pace on a row
// they slowed; a sweep that did not measure it says nothing.
func TestSweepOtherCPU(t *testing.T) {
	split := model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
	row := func(buf string, gibps float64, other model.Figure) model.SweepRow {
		r := model.SweepRow{Buffer: buf, ThroughputBps: model.Figure(gibps) * model.GiB, Placement: split}
		r.Figures.Client.CoresBusy = 0.99
		r.Figures.Server = &model.Process{CoresBusy: 0.5}
		r.OtherCoresBusy = &other
		return r
	}
	quiet := []model.SweepRow{row("default", 3, 0.02), row("2m", 4, 0.05)}
	if got := otherCPULine(quiet); got != "other processes: at most 0.05 cores busy during any measurement (quiet)" {
		t.Errorf("quiet: %q", got)
	}
	noisy := []model.SweepRow{row("default", 3, 0.02), row("2m", 4, 0.46)}
	if got := otherCPULine(noisy); got != "▲ other processes kept up to 0.46 cores busy during the measurements of 2m: those rows are slowed by them" {
		t.Errorf("noisy: %q", got)
	}
	rep := model.SweepReport{Rows: noisy, Optimum: sweep.Optimum(noisy)}
	if got := paceLine(rep); got != "pace: at 2m not judged — other processes kept 0.46 cores busy during its measurements, slowing them" {
		t.Errorf("pace of a noisy optimum: %q", got)
	}
	old := []model.SweepRow{{Buffer: "2m", ThroughputBps: model.GiB}}
	if got := otherCPULine(old); got != "" {
		t.Errorf("not measured: %q", got)
	}
}

// TestSweepHeaderCounts: the header says "median of 3" only when every row
// had its 3; a sweep cut short says what its rows are the median of, with
// each row's count in a measured column when they differ. The same holds
// for an exec sweep's table.
func TestSweepHeaderCounts(t *testing.T) {
	withCounts := func(rep model.SweepReport, counts ...int) model.SweepReport {
		rep.Rows = append([]model.SweepRow(nil), rep.Rows[:len(counts)]...)
		for i, n := range counts {
			rep.Rows[i].Repeats = n
		}
		return rep
	}
	execRep := func(rep model.SweepReport) model.SweepReport {
		rep.Spec.Exec = &model.ExecSpec{Command: "qemu-img convert {uri} null", Warmup: 1}
		for i := range rep.Rows {
			rep.Rows[i].Exec = &model.ExecRow{}
			rep.Rows[i].Figures.Server = &model.Process{}
		}
		return rep
	}
	for _, c := range []struct {
		name   string
		rep    model.SweepReport
		header string
		cells  []string // each row's measured cell; none: no column
	}{
		{"complete", withCounts(reporttest.Sweep(), 3, 3, 3), "median of 3;", nil},
		{"cut short alike", withCounts(reporttest.Sweep(), 1, 1), "median of 1 (3 asked);", nil},
		{"cut short unlike", withCounts(reporttest.Sweep(), 2, 1, 1), "median of the measurements each row had, of 3 asked (the measured column)",
			[]string{"| 2 of 3 |", "| 1 of 3 |", "| 1 of 3 |"}},
		{"exec complete", execRep(withCounts(reporttest.Sweep(), 3, 3)), "median of 3 (min–max) after 1 warm-up", nil},
		{"exec cut short", execRep(withCounts(reporttest.Sweep(), 2, 1)), "median of the runs each row had, of 3 asked (the measured column) (min–max)",
			[]string{"| 2 of 3 |", "| 1 of 3 |"}},
	} {
		if c.rep.Spec.Exec == nil && len(c.rep.Rows) > 0 {
			c.rep.Rows[0].Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
		}
		var b bytes.Buffer
		sweepTable(&b, c.rep)
		out := b.String()
		if !strings.Contains(out, c.header) {
			t.Errorf("%s: header does not say %q:\n%s", c.name, c.header, out)
		}
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| buffer size") {
				rows = append(rows, l)
			}
		}
		if has := strings.Contains(out, " measured |"); has != (c.cells != nil) {
			t.Errorf("%s: measured column %v, want %v:\n%s", c.name, has, c.cells != nil, out)
		}
		for i, cell := range c.cells {
			if i >= len(rows) || !strings.HasSuffix(rows[i], cell) {
				t.Errorf("%s: row %d does not end %q:\n%s", c.name, i, cell, out)
			}
		}
	}
}

// Every buffer a sweep can sweep is named in its captions: a sweep of
// --server-rcvbuf said "for each server send buffer" and "GiB/s by server
// send buffer".
func TestSweepSettingNamesEverySweptBuffer(t *testing.T) {
	seen := map[string]string{}
	for _, st := range model.BufferSettings() {
		name := sweepSetting(model.SweepSpec{Setting: st.Name})
		if other, dup := seen[name]; dup {
			t.Errorf("%s and %s are both captioned %q", st.Name, other, name)
		}
		seen[name] = st.Name
	}
}

// TestCompareSweepsMarksNoise: the speed-up of two sweeps' same size is
// judged over their repeats, with its interval and ≈.
func TestCompareSweepsMarksNoise(t *testing.T) {
	row := func(buf string, gibps ...float64) model.SweepRow {
		ms := make([]model.SweepMeasurement, len(gibps))
		for i, g := range gibps {
			ms[i] = model.SweepMeasurement{Seconds: 1 / g, ThroughputBps: model.Figure(g * model.GiB)}
		}
		r := model.SweepRow{Buffer: buf, Seconds: 1 / gibps[1], ThroughputBps: model.Figure(gibps[1] * model.GiB)}
		r.SetSpread(ms)
		return r
	}
	a := []model.SweepRow{row("default", 1.0, 1.01, 1.02), row("2m", 2.0, 2.5, 3.0)}
	b := []model.SweepRow{row("default", 2.0, 2.02, 2.04), row("2m", 2.1, 2.6, 3.1)}
	var out strings.Builder
	CompareSweeps(&out, Run{Name: "a", Report: model.Report{Sweep: &model.SweepReport{Rows: a, Optimum: model.OptimumOf(a)}}},
		Run{Name: "b", Report: model.Report{Sweep: &model.SweepReport{Rows: b, Optimum: model.OptimumOf(b)}}})
	if s := out.String(); !strings.Contains(s, "| 2.00x [1.9") || !strings.Contains(s, "| 1.04x ≈ [") {
		t.Errorf("speed-up cells:\n%s", s)
	}
}
