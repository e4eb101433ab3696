package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/report"
)

// TestRunIntervalsAndExports: `run -t 1.5 -P 2 -w 2m --intervals` prints
// a line per side per sample as iperf3 does, then the summary, while the
// same run goes to three files; the lines are as many as the samples the
// JSON export holds.
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
	if len(lines) != len(rep.Samples) {
		t.Errorf("%d interval lines for %d samples:\n%s", len(lines), len(rep.Samples), out)
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
