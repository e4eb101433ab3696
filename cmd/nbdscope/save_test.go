package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/sweep"
	"nbdscope/ui"
)

// unwritableDir is a directory path that cannot be made, even by root: its
// parent is a regular file.
func unwritableDir(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(file, "sub")
}

// noMeasuring makes a test fail should run or sweep start a measurement.
func noMeasuring(t *testing.T) {
	t.Helper()
	oldStart, oldSweep := startPair, sweepPair
	t.Cleanup(func() { startPair, sweepPair = oldStart, oldSweep })
	startPair = func(context.Context, model.Config) (*engine.Pair, error) {
		t.Error("a run started, though its save could not be kept")
		return nil, context.Canceled
	}
	sweepPair = func(context.Context, model.Config, model.SweepSpec, func(sweep.SweepProgress)) ([]model.SweepRow, error) {
		t.Error("a sweep started, though its save could not be kept")
		return nil, context.Canceled
	}
}

// TestSaveRefusedBeforeMeasuring: with a runs store that cannot be
// written (XDG_DATA_HOME or NBDSCOPE_HOME under a regular file, which
// stops root too), run --save and sweep --save exit 2 before any load
// starts, saying why (issue 21: the run was made, then thrown away).
func TestSaveRefusedBeforeMeasuring(t *testing.T) {
	noMeasuring(t)
	for _, env := range []string{"XDG_DATA_HOME", "NBDSCOPE_HOME"} {
		t.Setenv("NBDSCOPE_HOME", "")
		t.Setenv("HOME", t.TempDir())
		t.Setenv(env, unwritableDir(t))
		for _, args := range [][]string{
			{"run", "--duration", "2s", "--save", "x"},
			{"run", "--duration", "2s", "--save", "x", "--force"},
			{"sweep", "--bytes", "64m", "--repeat", "1", "--sndbuf", "default", "--save", "x"},
		} {
			code, out, errs := runApp(t, args...)
			if code != exitUsage || !strings.Contains(errs, `run "x" cannot be saved: mkdir `) || !strings.Contains(errs, "not a directory") {
				t.Errorf("%s %q: exit %d, stderr %q; want 2 and why", env, args, code, errs)
			}
			if out != "" {
				t.Errorf("%s %q: stdout %q", env, args, out)
			}
		}
	}
}

// breakStoreAfter makes the runs store unwritable once the measurement
// has started: its directory becomes a file, as a disk that fills or a
// directory removed under the run would fail the save.
func breakStoreAfter(t *testing.T, runDir string) {
	t.Helper()
	oldStart, oldSweep := startPair, sweepPair
	t.Cleanup(func() { startPair, sweepPair = oldStart, oldSweep })
	breakStore := func() {
		if err := os.RemoveAll(runDir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(runDir, []byte("not a directory"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startPair = func(ctx context.Context, cfg model.Config) (*engine.Pair, error) {
		p, err := oldStart(ctx, cfg)
		breakStore()
		return p, err
	}
	sweepPair = func(ctx context.Context, cfg model.Config, spec model.SweepSpec, progress func(sweep.SweepProgress)) ([]model.SweepRow, error) {
		breakStore()
		return oldSweep(ctx, cfg, spec, progress)
	}
}

// TestSaveFailsAfterMeasuring: a save that fails after a real measurement
// prints the result first (JSON, table), then exits 1 with the reason.
func TestSaveFailsAfterMeasuring(t *testing.T) {
	home := storeCmdHome(t)
	t.Setenv(asBinaryEnv, "1") // the children are this test binary
	breakStoreAfter(t, filepath.Join(home, "runs"))
	for _, c := range []struct {
		args []string
		got  func(out string) bool
	}{
		{[]string{"run", "--duration", "1s", "--interval", "100ms", "--request-size", "256k", "--json", "--save", "x"}, func(out string) bool {
			var rep model.Report
			return json.Unmarshal([]byte(out), &rep) == nil && len(rep.Sides) == 2 && len(rep.Samples) > 0
		}},
		{[]string{"run", "--duration", "1s", "--interval", "100ms", "--request-size", "256k", "--save", "x"}, func(out string) bool {
			return strings.Contains(out, "throughput") && strings.Contains(out, "iB/s")
		}},
		{[]string{"sweep", "--bytes", "64m", "--repeat", "1", "--sndbuf", "default,1m", "--request-size", "256k", "--json", "--save", "x"}, func(out string) bool {
			var rep model.SweepReport
			return json.Unmarshal([]byte(out), &rep) == nil && len(rep.Rows) == 2
		}},
	} {
		os.Remove(filepath.Join(home, "runs")) // the last case's break
		code, out, errs := runApp(t, c.args...)
		if code != exitFailure || !strings.Contains(errs, `saving run "x": `) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and the reason", c.args, code, errs)
		}
		if !c.got(out) {
			t.Errorf("%q: the result was not printed:\n%.400s", c.args, out)
		}
	}
}

// reportCtrl is a controller that has a run to report, for the explorer's
// s key; nothing else of it is called here.
type reportCtrl struct{ engine.Controller }

func (reportCtrl) Report() model.Report { return model.Report{} }

// The explorer's s saves the run too, and is told where: the path it
// names (help, message) is the file the save writes (issue 21, item 10).
func TestExplorerSaveNamesRunFile(t *testing.T) {
	home := storeCmdHome(t)
	a := testApp()
	var o ui.Options
	a.tuiPresets(&o)
	a.saveRunsToo(&o, reportCtrl{})
	if o.RunPath == nil {
		t.Fatal("the explorer is not told where s writes the run")
	}
	want := filepath.Join(home, "runs", "mine.json")
	if got := o.RunPath("mine"); got != want {
		t.Fatalf("RunPath(mine) = %q, want %q", got, want)
	}
	if err := o.SavePreset("mine", model.DefaultConfig(), "macos-gap"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("s did not write the run file it names: %v", err)
	}
	// The run names the preset the explorer's header named, where it
	// named none ("-" in runs list) before.
	code, out, _ := runApp(t, "runs", "list")
	if code != 0 || !strings.Contains(out, "mine") || !strings.Contains(out, "macos-gap") {
		t.Errorf("runs list: exit %d\n%s\nwant mine from macos-gap", code, out)
	}
}
