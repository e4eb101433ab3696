package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/sweep"
)

// madeUpSweep is a sweep report with known figures.
func madeUpSweep() model.SweepReport {
	row := func(buf string, eff int, gibps float64) model.SweepRow {
		return model.SweepRow{Buffer: buf, Effective: eff, Seconds: 1 / gibps, ClientUserS: 0.1, ClientSysS: 0.2,
			ServerUserS: 0.05, ServerSysS: 0.3, ThroughputBps: model.Figure(gibps * model.GiB), RecvPer2MiB: 12.5,
			EAGAINPer2MiB: 3, Repeats: 3}
	}
	rows := []model.SweepRow{row("default", 212992, 1.425), row("64k", 131072, 0.8), row("1m", 2097152, 3.42),
		row("2m", 4194304, 3.30), row("4m", 8388608, 3.25), row("8m", 16777216, 3.2)}
	cfg := model.DefaultConfig()
	spec := model.SweepSpec{Bytes: 1 << 30, Repeat: 3}
	return model.SweepReport{Version: model.SweepVersion, Spec: spec, Config: cfg, Rows: rows, Optimum: sweep.Optimum(rows)}
}

func TestSweepOutputsMadeUp(t *testing.T) {
	rep := madeUpSweep()
	var md bytes.Buffer
	writeSweepMarkdown(&md, rep)
	const want = "optimal: 1m (3.42 GiB/s, 2.40 times faster than default); within 5%: 1m, 2m, 4m"
	if !strings.Contains(md.String(), "\n"+want+"\n") {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	if !strings.Contains(md.String(), "| buffer size | time | client user | client system | server user | server system | calls per 2 MiB | EAGAIN per 2 MiB | GiB/s |") ||
		!strings.Contains(md.String(), "| 1m (2m) | 0.292s | 0.100s | 0.200s | 0.050s | 0.300s | 12.5 | 3.0 | 3.42 |") {
		t.Errorf("markdown table:\n%s", md.String())
	}

	var bars bytes.Buffer
	writeSweepBars(&bars, rep, 60)
	lines := strings.Split(strings.TrimRight(bars.String(), "\n"), "\n")
	if lines[0] != "GiB/s by server send buffer (swept: default, 64k, 1m, 2m, 4m, 8m)" || len(lines) != 7 {
		t.Fatalf("bars:\n%s", bars.String())
	}
	full := strings.Count(lines[3], "█") // 1m, the fastest, fills the room
	for i, l := range lines[1:] {
		if w := len([]rune(l)); w != 60 {
			t.Errorf("bar line %d is %d wide, want the width 60: %q", i, w, l)
		}
		if !strings.HasSuffix(l, gibps(rep.Rows[i].ThroughputBps)) {
			t.Errorf("bar %q not labelled with its GiB/s", l)
		}
	}
	if half := strings.Count(lines[2], "█"); full == 0 || half < full*8/34-1 || half > full*8/34+1 {
		t.Errorf("64k bar %d cells vs 1m %d: want the ratio 0.8/3.42", half, full)
	}

	var c bytes.Buffer
	if err := writeSweepCSV(&c, rep); err != nil {
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
			"optimal: default (2.00 GiB/s, the default); within 5%: default"},
		{[]model.SweepRow{{Buffer: "64k", ThroughputBps: model.GiB}, {Buffer: "1m", ThroughputBps: 1.5 * model.GiB}},
			"optimal: 1m (1.50 GiB/s; the default was not swept); within 5%: 1m"},
		{nil, "optimal: n/a (no size moved any payload)"},
	} {
		if got := optimumLine(sweep.Optimum(c.rows)); got != c.want {
			t.Errorf("optimumLine = %q, want %q", got, c.want)
		}
	}
}

// TestSweepFlagsWinOverPreset: a flag the user typed wins over the
// preset's sweep, even when it equals the flag's default.
func TestSweepFlagsWinOverPreset(t *testing.T) {
	storeCmdHome(t)
	preset, err := testApp().sweepSpec("sweep")
	if err != nil || preset == nil {
		t.Fatalf("sweep preset: %v", err)
	}
	specErr := func(args ...string) (model.SweepSpec, error) {
		t.Helper()
		cmd := newSweepCmd(testApp())
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		f := sweepFlags{lists: map[string]*string{}}
		for _, st := range model.BufferSettings() {
			v, _ := cmd.Flags().GetString(st.Name)
			f.lists[st.Name] = &v
		}
		f.bytes, _ = cmd.Flags().GetString("bytes")
		f.repeat, _ = cmd.Flags().GetInt("repeat")
		return f.spec(cmd.Flags(), preset)
	}
	spec := func(args ...string) model.SweepSpec {
		t.Helper()
		s, err := specErr(args...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := spec(); s.Repeat != preset.Repeat || s.Bytes != preset.Bytes || len(s.Sizes) != len(preset.Sizes) {
		t.Errorf("no flags: %+v, want the preset's %+v", s, *preset)
	}
	if s := spec("--repeat", "1", "--bytes", "1g"); s.Repeat != 1 || s.Bytes != 1<<30 || len(s.Sizes) != len(preset.Sizes) {
		t.Errorf("--repeat 1 --bytes 1g: %+v", s)
	}
	// Typed values equal to the defaults still win (the old code compared
	// against the default text).
	if s := spec("--repeat", "3", "--bytes", "4g", "--sndbuf", "64k,1m"); s.Repeat != 3 || s.Bytes != 4<<30 || len(s.Sizes) != 2 {
		t.Errorf("explicit defaults: %+v", s)
	}
	// --client-sndbuf sweeps the client's send buffer (issue 17).
	if s := spec("--client-sndbuf", "default,256k,1m"); s.Setting != model.SetClientSndBuf || fmt.Sprint(s.Sizes) != "[default 256k 1m]" {
		t.Errorf("--client-sndbuf: setting %q sizes %v", s.Setting, s.Sizes)
	}
	if _, err := specErr("--client-sndbuf", "1m", "--sndbuf", "2m"); err == nil || !strings.Contains(err.Error(), "one buffer at a time") {
		t.Errorf("two buffers swept at once: %v", err)
	}
	if _, err := specErr("--client-sndbuf", "1m,lots"); err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Errorf("a bad size: %v", err)
	}
}

func TestSweepProgressLine(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var out bytes.Buffer
	sp := newSweepProgress(&out, false, clock)
	now = now.Add(60 * time.Second) // 12 of 24 done in 60s: 60s to go
	sp.update(sweep.SweepProgress{Size: "256k", SizeIndex: 3, Sizes: 8, Repeat: 2, Repeats: 3, Done: 12, Total: 24,
		Last: model.SweepRow{ThroughputBps: model.Figure(2.41 * model.GiB)}})
	if got, want := out.String(), "[3/8] 256k repeat 2/3 · 2.41 GiB/s · ETA 1m0s\n"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	out.Reset()
	tty := newSweepProgress(&out, true, clock)
	tty.update(sweep.SweepProgress{Size: "1m", SizeIndex: 1, Sizes: 2, Repeat: 1, Repeats: 1, Done: 1, Total: 2})
	tty.finish()
	if s := out.String(); !strings.HasPrefix(s, "\r\033[K") || !strings.Contains(s, "[1/2] 1m repeat 1/1") || !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("tty progress %q", s)
	}
}

// TestSweepReal runs a short real sweep and checks that the optimum line
// and the JSON optimum agree with the printed table.
func TestSweepReal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real NBD sides")
	}
	storeCmdHome(t)
	t.Setenv(asBinaryEnv, "1") // the children are this test binary
	args := []string{"sweep", "--sndbuf", "default,64k,1m", "--bytes", "64m", "--repeat", "1", "--interval", "100ms",
		"--size", "1g", "--request-size", "256k"}
	code, out, errs := runApp(t, args...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errs)
	}
	// Progress: one plain line per measurement (stderr is not a terminal).
	if n := len(regexp.MustCompile(`(?m)^\[\d/3\] \S+ repeat 1/1 · [\d.]+ GiB/s · ETA `).FindAllString(errs, -1)); n != 3 {
		t.Errorf("progress lines %d, want 3:\n%s", n, errs)
	}
	// The optimum line against the table's own GiB/s column.
	re := regexp.MustCompile(`(?m)^\| (\S+)(?: \([^)]*\))? \|.*\| ([\d.]+) \|` + spreadCellsRE)
	best, bestV, def := "", 0.0, 0.0
	vals := map[string]float64{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		vals[m[1]] = v
		if v > bestV {
			best, bestV = m[1], v
		}
		if m[1] == "default" {
			def = v
		}
	}
	if len(vals) != 3 {
		t.Fatalf("table rows %v:\n%s", vals, out)
	}
	line := regexp.MustCompile(`(?m)^optimal: (\S+) \(([\d.]+) GiB/s(?:, ([\d.]+) times faster than default|, the default|; the default was not swept)\); within 5%: (.*)$`).FindStringSubmatch(out)
	if line == nil {
		t.Fatalf("no optimum line:\n%s", out)
	}
	// The optimum is picked from unrounded throughputs, the table shows them
	// to 0.01 GiB/s: two rows can print the same top figure, and either may
	// be the optimum (the first in the table need not be).
	if line[2] != fmt.Sprintf("%.2f", bestV) || vals[line[1]] != bestV {
		t.Errorf("optimum %s %s, table says %s %.2f", line[1], line[2], best, bestV)
	}
	// Each table figure is within half a unit of its true value; slack
	// covers float error at the rounding boundaries.
	const half, slack = 0.005, 1e-9
	if line[3] != "" {
		// The ratio is of the true figures, rounded to 0.01.
		lo, hi := (bestV-half)/(def+half)-0.005-slack, (bestV+half)/(def-half)+0.005+slack
		if x, _ := strconv.ParseFloat(line[3], 64); x < lo || x > hi {
			t.Errorf("%s times faster than default; table says %.2f/%.2f", line[3], bestV, def)
		}
	}
	within := map[string]bool{}
	for _, b := range strings.Split(line[4], ", ") {
		within[b] = true
		if vals[b]+half < (1-sweep.OptimumTolerance)*(bestV-half)-slack {
			t.Errorf("%s (%.2f) listed within 5%% of %.2f", b, vals[b], bestV)
		}
	}
	for b, v := range vals {
		if !within[b] && v-half >= (1-sweep.OptimumTolerance)*(bestV+half)+slack {
			t.Errorf("%s (%.2f) not listed within 5%% of %.2f", b, v, bestV)
		}
	}
	// Table, then the bars (their caption naming the sizes swept), then the optimum.
	if tb, bc, op := strings.Index(out, "| buffer size |"), strings.Index(out, "GiB/s by server send buffer (swept: default, 64k, 1m)\n"),
		strings.Index(out, "optimal: "); tb < 0 || bc < tb || op < bc {
		t.Errorf("want table, bars, optimum in that order:\n%s", out)
	}

	// JSON carries the same optimum.
	code, jout, errs := runApp(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("sweep --json: exit %d\n%s", code, errs)
	}
	var rep model.SweepReport
	if err := json.Unmarshal([]byte(jout), &rep); err != nil {
		t.Fatalf("sweep --json: %v\n%s", err, jout)
	}
	o := sweep.Optimum(rep.Rows)
	if rep.Version != model.SweepVersion || rep.Nbdscope != model.Version || rep.Optimum == nil ||
		rep.Optimum.Buffer != o.Buffer || len(rep.Rows) != 3 || rep.Spec.Bytes != 64<<20 {
		t.Errorf("json: version %d, optimum %+v (want %+v), %d rows", rep.Version, rep.Optimum, o, len(rep.Rows))
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
