package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"nbdscope/internal/testbin"
)

// TestRunHangUpSaves: a run hung up (SIGHUP: its ssh session or terminal
// closed) prints its partial summary and saves it, as ctrl+c does, and
// exits 130 (issue 33: it died of the signal with nothing printed or
// saved).
func TestRunHangUpSaves(t *testing.T) {
	realSidesHome(t)
	sampling := func(p *exec.Cmd, _ *testbin.SyncBuffer) bool { // both sides' servers and loads are up
		kids, _ := testbin.ChildPIDs(p.Process.Pid)
		return len(kids) >= 4
	}
	args := []string{"run", "--duration", "60s", "--interval", "100ms", "--request-size", "256k", "--save", "hup"}
	code, stdout, stderr := interrupt(t, signalCase{args: args, ready: sampling}, syscall.SIGHUP)
	if code != exitInterrupted {
		t.Errorf("run --save after SIGHUP: exit %d, want %d\nstderr: %s", code, exitInterrupted, stderr)
	}
	if !strings.Contains(stdout, "PARTIAL RUN") {
		t.Errorf("run after SIGHUP printed no partial summary:\n%s", stdout)
	}
	if !strings.Contains(stderr, `run saved as "hup"`) {
		t.Errorf("run after SIGHUP did not say it saved:\n%s", stderr)
	}
	if out := runsList(t); !strings.Contains(out, "hup ") || !strings.Contains(out, "partial: interrupted") {
		t.Errorf("runs list after a hung-up run --save hup:\n%s", out)
	}
}
