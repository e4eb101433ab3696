package main

import (
	"bytes"
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
	inProcessSides(t)
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
	line := regexp.MustCompile(`(?m)^optimal: (?:not judged — )?(\S+)(?: is the fastest)? \(([\d.]+) GiB/s(?:, ([\d.]+)x(?: \[[^\]]*\])? the default's|, the default|; the default was not swept)\); within 5%: ([^;\n]*)`).FindStringSubmatch(out)
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
			t.Errorf("%sx the default's; table says %.2f/%.2f", line[3], bestV, def)
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
