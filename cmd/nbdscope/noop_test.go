package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/model"
)

// TestNoSilentNoOps: a flag or change that would do nothing is refused
// with exit 2 and why, before anything runs (issue 21 item 6: each exited
// 0, or swept the default, without a word).
func TestNoSilentNoOps(t *testing.T) {
	storeCmdHome(t)
	noMeasuring(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--at", "5s:b.sndbuf=2m", "--duration", "2s"}, "--at 5s is after the end of the run (--duration 2s)"},
		{[]string{"run", "--at", "2s:b.sndbuf=2m", "--duration", "2s"}, "--at 2s is the end of the run (--duration 2s)"},
		{[]string{"sweep", "--connections-b", "4"}, "--connections-b: a sweep moves side A only"},
		{[]string{"sweep", "--workload-b", "write"}, "--workload-b: a sweep moves side A only"},
		{[]string{"sweep", "--mode", "concurrent"}, "--mode: a sweep measures side A alone"},
		{[]string{"sweep", "--sndbuf", ""}, `--sndbuf "": an empty size in the list`},
		{[]string{"sweep", "--client-rcvbuf", "64k,,2m"}, `--client-rcvbuf "64k,,2m": an empty size in the list`},
		{[]string{"run", "--interval", "0s"}, "interval 0s: want 50ms to 1m"},
		{[]string{"run", "--interval", "1ns"}, "interval 1ns: want 50ms to 1m"},
		{[]string{"sweep", "--interval", "0s"}, "interval 0s: want 50ms to 1m"},
		{[]string{"--interval", "0s"}, "interval 0s: want 50ms to 1m"},
		{[]string{"run", "--duration", "0s"}, "--duration must be positive"},
		{[]string{"run", "--sndbuf-b", ""}, "--sndbuf-b: an empty value"},
		{[]string{"run", "--connections", ""}, "--connections: an empty value"},
		{[]string{"run", "--mode", ""}, "--mode: an empty value"},
	} {
		code, _, errs := runApp(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestEmptyExecIsOurLoad: an empty --exec-b is a value (our load, as its
// help says), not ignored: it replaces the client command a preset gave.
func TestEmptyExecIsOurLoad(t *testing.T) {
	base := model.DefaultConfig()
	base.Sides[1].Exec = "nbdinfo {uri}"
	cmd := &cobra.Command{Use: "run"}
	lf := addLoadFlags(testApp(), cmd, true)
	if err := cmd.ParseFlags([]string{"--exec-b", ""}); err != nil {
		t.Fatal(err)
	}
	cfg, err := lf.apply(base)
	if err != nil || cfg.Sides[1].Exec != "" {
		t.Errorf("--exec-b '' over a preset's client: exec %q, %v; want our load", cfg.Sides[1].Exec, err)
	}
}

// TestExplorerRunsUntilStopped: the explorer's flags (no --duration) leave
// the preset's duration alone, 0 = until stopped; run's default 10 s once
// leaked into it and ended every explorer session at 0:10.
func TestExplorerRunsUntilStopped(t *testing.T) {
	cmd := &cobra.Command{Use: "nbdscope"}
	lf := addLoadFlags(testApp(), cmd, false)
	if err := cmd.ParseFlags([]string{"-P", "2"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := lf.apply(model.DefaultConfig())
	if err != nil || cfg.Duration != 0 {
		t.Fatalf("explorer config: duration %v, %v; want 0 (until stopped)", cfg.Duration.D(), err)
	}
	run := &cobra.Command{Use: "run"}
	lr := addLoadFlags(testApp(), run, true)
	if err := run.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if cfg, err := lr.apply(model.DefaultConfig()); err != nil || cfg.Duration.D() != 10*time.Second {
		t.Fatalf("run config: duration %v, %v; want the 10 s default", cfg.Duration.D(), err)
	}
}
