package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/report"
)

// TestRunIntervalsAndExports: `run -t 1.5 -P 2 -w 2m -i 0.25 --intervals`
// prints a line per side per sample as iperf3 does (-i given), a side's
// idle stretch folded into one, then the summary, while the same run goes
// to three files; the lines are as many as the JSON export's active
// samples and idle stretches.
func TestRunIntervalsAndExports(t *testing.T) {
	inProcessSides(t)
	dir := t.TempDir()
	fj, fc, fm := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.md")
	code, out, errs := runApp(t, "run", "-t", "1.5", "-P", "2", "-w", "2m", "-i", "0.25", "--size", "1g", "--intervals",
		"--export-json", fj, "--export-csv", fc, "--export-markdown", fm)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var rep model.Report
	data, err := os.ReadFile(fj)
	if err != nil || json.Unmarshal(data, &rep) != nil || len(rep.Samples) == 0 {
		t.Fatalf("--export-json: %v\n%.300s", err, data)
	}
	line := regexp.MustCompile(`(?m)^\[([AB])\] +\d+\.\d\d-\d+\.\d\d s +(?:idle|\S+ \S+/s  recv \S+/2MiB  EAGAIN \S+  cpu \S+/\S+  wait \S+/\S+  sndbuf 2m \(\S+\))`)
	lines := line.FindAllStringSubmatch(out, -1)
	if want := activeAndIdleStretches(rep.Samples); len(lines) != want {
		t.Errorf("%d interval lines for %d active samples and idle stretches:\n%s", len(lines), want, out)
	}
	if !strings.HasPrefix(out, report.IntervalLegend+"\n") || strings.Index(out, "\nfigure ") < strings.LastIndex(out, "\n[") {
		t.Errorf("want the legend, the lines, then the summary:\n%s", out)
	}
	recs, err := csv.NewReader(mustOpen(t, fc)).ReadAll()
	if err != nil || len(recs) != len(rep.Samples)+1 {
		t.Errorf("--export-csv: %d records for %d samples (%v)", len(recs), len(rep.Samples), err)
	}
	if md, _ := os.ReadFile(fm); !strings.Contains(string(md), "| side |") {
		t.Errorf("--export-markdown:\n%s", md)
	}
	for _, f := range []string{fj, fc, fm} {
		if !strings.Contains(errs, "written to "+f) {
			t.Errorf("stderr does not say %s was written:\n%s", f, errs)
		}
	}
}

// activeAndIdleStretches counts a line per active sample and per stretch
// of a side's idle samples.
func activeAndIdleStretches(samples []model.Sample) int {
	n := 0
	idle := map[model.SideID]bool{}
	for _, s := range samples {
		if s.Active || !idle[s.Side] {
			n++
		}
		idle[s.Side] = !s.Active
	}
	return n
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(data)
}

// TestJSONStreamInterrupted: `run --json-stream` stopped by SIGINT exits
// 130, and its stream is whole lines of JSON, each with its type, the
// last the summary marking the run partial.
func TestJSONStreamInterrupted(t *testing.T) {
	home := realSidesHome(t)
	cmd := exec.Command(os.Args[0], "run", "--json-stream", "-t", "60", "-i", "0.1", "--size", "1g")
	cmd.Env = append(os.Environ(), asBinaryEnv+"=1", "NBDSCOPE_HOME="+home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errs := &testbin.SyncBuffer{}
	cmd.Stderr, cmd.SysProcAttr = errs, childAttrs()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	var raw bytes.Buffer // every byte read, to check the stream ends with a whole line
	go func() {
		defer close(lines)
		r := bufio.NewReader(io.TeeReader(stdout, &raw))
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- l
		}
	}()
	var got []string
	deadline := time.After(60 * time.Second)
	signalled := false
	for l := range lines {
		got = append(got, l)
		if !signalled && strings.HasPrefix(l, `{"type":"sample"`) {
			cmd.Process.Signal(syscall.SIGINT)
			signalled = true
		}
		select {
		case <-deadline:
			t.Fatalf("no end within 60s:\n%s", errs)
		default:
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit %v, want %d:\n%s", err, exitInterrupted, errs)
	}
	if !signalled || len(got) < 3 || !bytes.HasSuffix(raw.Bytes(), []byte("\n")) {
		t.Fatalf("signalled %v, %d lines; stream:\n%s", signalled, len(got), raw.String())
	}
	for i, l := range got {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil || obj["type"] == nil {
			t.Fatalf("line %d is not an object with a type (%v): %q", i, err, l)
		}
	}
	var last struct {
		Type          string `json:"type"`
		Partial       bool   `json:"partial"`
		PartialReason string `json:"partial_reason"`
	}
	json.Unmarshal([]byte(got[len(got)-1]), &last)
	if !strings.HasPrefix(got[0], `{"type":"start"`) || last.Type != "summary" || !last.Partial || !strings.Contains(last.PartialReason, "interrupted") {
		t.Errorf("first %.60q, last %+v", got[0], last)
	}
}

// TestRunIntervalsSeconds: without -i, `run --intervals` prints a line a
// second per side (iperf3's), the 250 ms samples folded into it, and never
// two idle lines of a side in a row; it printed a line per sample.
func TestRunIntervalsSeconds(t *testing.T) {
	inProcessSides(t)
	fj := filepath.Join(t.TempDir(), "r.json")
	code, out, errs := runApp(t, "run", "-t", "2.2", "--size", "1g", "--intervals", "--export-json", fj)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var rep model.Report
	data, err := os.ReadFile(fj)
	if err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("--export-json: %v", err)
	}
	line := regexp.MustCompile(`(?m)^\[([AB])\] +(\d+\.\d\d)-(\d+\.\d\d) s +(idle)?`)
	actives, samples := 0, 0
	lastIdle := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		from, to := atof(t, m[2]), atof(t, m[3])
		// A second, give or take the samples' own ends (a sample is in
		// the second its middle falls in): never two seconds' worth.
		if to-from > 1.26 && m[4] == "" {
			t.Errorf("an active line of %.2f s: %s", to-from, m[0])
		}
		if m[4] != "" && lastIdle[m[1]] {
			t.Errorf("two idle lines of %s in a row:\n%s", m[1], out)
		}
		lastIdle[m[1]] = m[4] != ""
		if m[4] == "" {
			actives++
		}
	}
	// The seconds the active samples fall in, a side's each (the one a
	// sample's middle is in, as the folder buckets them) and a change
	// ending a line: at most that many active lines, however the
	// machine's load spread the samples over the turns.
	seconds, prevT := map[string]bool{}, map[model.SideID]float64{}
	changes := 0
	for _, s := range rep.Samples {
		from, ok := prevT[s.Side]
		if !ok {
			from = max(0, s.T-0.25)
		}
		prevT[s.Side] = s.T
		if s.Active {
			samples++
			seconds[fmt.Sprintf("%s %d", s.Side, int(math.Floor((from+s.T)/2)))] = true
		}
		if s.Changed {
			changes++
		}
	}
	if actives == 0 || actives > len(seconds)+changes {
		t.Errorf("%d active lines for %d active samples of 250 ms in %d seconds of a side, want one a second:\n%s", actives, samples, len(seconds), out)
	}
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
