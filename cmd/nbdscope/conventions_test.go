package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConventionsBadUsage: each of these is bad usage (exit 2) before
// anything runs, with a message that names the flag.
func TestConventionsBadUsage(t *testing.T) {
	storeCmdHome(t)
	dir := t.TempDir()
	same := filepath.Join(dir, "out")
	for _, c := range []struct {
		args  []string
		names []string // in the message
	}{
		{[]string{"run", "--export-json", same, "--export-csv", same}, []string{"--export-json", "--export-csv", "same file"}},
		{[]string{"sweep", "--export-hyperfine", same, "--export-markdown", filepath.Join(dir, ".", "out")}, []string{"--export-hyperfine", "--export-markdown", "same file"}},
		{[]string{"run", "--rate-unit", "gb"}, []string{"--rate-unit", "gbit"}},
		{[]string{"sweep", "--rate-unit", "kib"}, []string{"--rate-unit"}},
		{[]string{"run", "-w", "2m", "-w", "4m"}, []string{"-w/--sndbuf", "given twice"}},
		{[]string{"run", "-w", "2m", "--sndbuf", "4m"}, []string{"-w/--sndbuf", "given twice"}},
		{[]string{"run", "-P", "2", "-P", "4"}, []string{"-P/--connections", "given twice"}},
		{[]string{"sweep", "-r", "1", "-r", "2"}, []string{"-r/--repeat", "given twice"}},
		{[]string{"serve", "-p", "1", "-p", "2"}, []string{"-p/--port", "given twice"}},
		{[]string{"run", "-J", "--json"}, []string{"-J/--json", "given twice"}},
		{[]string{"run", "-w2m", "-w4m"}, []string{"-w/--sndbuf", "given twice"}},
		// A long flag given twice keeps pflag's rule, the last wins (a
		// script's override): refused here for its value, not the repeat.
		{[]string{"sweep", "--repeat", "1", "--repeat", "200"}, []string{"--repeat 200"}},
		{[]string{"run", "-w", "2x"}, []string{"-w/--sndbuf", "2x"}},
		{[]string{"sweep", "-w", "x"}, []string{"-w, --warmup"}},
		{[]string{"run", "-t", "soon"}, []string{"-t, --duration"}},
		{[]string{"run", "-i", "0"}, []string{"-i/--interval 0s", "want 50ms to 1m"}},
		{[]string{"sweep", "--interval", "2m"}, []string{"--interval 2m0s", "want 50ms to 1m"}},
		{[]string{"run", "--json", "--export-csv", "-"}, []string{"--json", "--export-csv -", "stdout"}},
		{[]string{"run", "--intervals", "--json-stream"}, []string{"--intervals", "--json-stream", "stdout"}},
		{[]string{"sweep", "--csv", "--markdown"}, []string{"--csv", "--markdown", "stdout"}},
		{[]string{"run", "--export-csv", filepath.Join(dir, "no", "such", "dir", "x.csv")}, []string{"--export-csv", "no such file"}},
		{[]string{"run", "--export-json", dir}, []string{"--export-json", "is a directory"}},
		{[]string{"run", "--export-markdown", ""}, []string{"--export-markdown", "FILE"}},
		{[]string{"serve", "-f", "qcow2"}, []string{"-f/--format", "raw"}},
		{[]string{"serve", "-p", "10809", "-k", filepath.Join(dir, "s.sock")}, []string{"-p/-b", "-k"}},
		{[]string{"serve", "-b", "127.0.0.1", "--listen", "127.0.0.1:1"}, []string{"-p/-b", "--listen"}},
	} {
		code, out, errs := runApp(t, c.args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing on stdout", c.args, code, out)
		}
		for _, n := range c.names {
			if !strings.Contains(errs, n) {
				t.Errorf("%v: message does not name %q:\n%s", c.args, n, errs)
			}
		}
	}
	if _, err := os.Stat(same); err == nil {
		t.Errorf("a refused export left %s behind", same)
	}
}

// TestExportCheckKeepsTheFile: checking that an existing export file can
// be written does not change it; a command refused afterwards leaves it
// as it was.
func TestExportCheckKeepsTheFile(t *testing.T) {
	storeCmdHome(t)
	path := filepath.Join(t.TempDir(), "keep.json")
	if err := os.WriteFile(path, []byte("an earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runApp(t, "run", "--export-json", path, "--sndbuf", "2x"); code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s", code, errs)
	}
	if data, _ := os.ReadFile(path); string(data) != "an earlier run\n" {
		t.Errorf("the file now holds %q", data)
	}
}

// TestSecondsFlag: -t and -i take iperf3's bare seconds and Go durations.
func TestSecondsFlag(t *testing.T) {
	for in, want := range map[string]time.Duration{"3": 3 * time.Second, "0.5": 500 * time.Millisecond, "250ms": 250 * time.Millisecond, "1m30s": 90 * time.Second} {
		var d time.Duration
		if err := (secondsValue{&d}).Set(in); err != nil || d != want {
			t.Errorf("%q: %v (%v), want %v", in, d, err, want)
		}
	}
	for _, bad := range []string{"-1", "soon", "3x", ""} {
		var d time.Duration
		if err := (secondsValue{&d}).Set(bad); err == nil {
			t.Errorf("%q accepted as %v", bad, d)
		}
	}
}
