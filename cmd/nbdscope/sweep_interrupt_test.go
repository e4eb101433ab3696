package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// TestSweepSignals: a sweep stopped by SIGTERM says "terminated", by
// SIGINT "interrupted" (never "context canceled"), exits 130 and prints
// the rows it has, each with the count it had.
func TestSweepSignals(t *testing.T) {
	realSidesHome(t) // NBDSCOPE_HOME, which the sweep inherits
	for _, c := range []struct {
		sig  syscall.Signal
		word string
		name string
	}{{syscall.SIGTERM, "terminated", "SIGTERM"}, {syscall.SIGINT, "interrupted", "SIGINT"}} {
		t.Run(c.name, func(t *testing.T) {
			// 200 measurements: far more than come before the signal.
			args := append(append([]string(nil), sweepSmall...), "--bytes", "64m", "--repeat", "100")
			measuring := func(_ *exec.Cmd, e *testbin.SyncBuffer) bool { return strings.Contains(e.String(), "repeat 1/100") }
			code, so, errs := interrupt(t, signalCase{args: args, ready: measuring}, c.sig)
			if !strings.Contains(errs, "repeat 1/100") {
				t.Fatalf("no measurement within %v:\n%s", readyWait, errs)
			}
			if code != exitInterrupted {
				t.Errorf("exit %d, want %d", code, exitInterrupted)
			}
			m := regexp.MustCompile(`nbdscope: sweep ` + c.word + ` after (\d+) of 200 measurements \(` + c.name + `\)\n`).FindStringSubmatch(errs)
			if m == nil || strings.Contains(errs, "context canceled") {
				t.Fatalf("stderr does not say %q:\n%s", c.word, errs)
			}
			if !strings.Contains(so, "PARTIAL SWEEP: "+c.word+" after "+m[1]+" of 200 measurements") || strings.Contains(so, "median of 100") {
				t.Errorf("stdout of a sweep %s after %s measurements:\n%s", c.word, m[1], so)
			}
			// The rows' counts add up to the measurements made.
			done, _ := strconv.Atoi(m[1])
			counted := 0
			for _, r := range regexp.MustCompile(`(?m)^\|.*\| (\d+) of 100 \|$`).FindAllStringSubmatch(so, -1) {
				n, _ := strconv.Atoi(r[1])
				counted += n
			}
			if alike := regexp.MustCompile(`median of (\d+) \(100 asked\)`).FindStringSubmatch(so); alike != nil {
				n, _ := strconv.Atoi(alike[1])
				counted = n * len(regexp.MustCompile(`(?m)^\| (default|1m) `).FindAllString(so, -1))
			}
			if counted != done {
				t.Errorf("rows count %d measurements, stderr says %d:\n%s", counted, done, so)
			}
		})
	}
}

// signalCase starts a command that handles SIGINT and SIGTERM, and says
// which status each must give.
type signalCase struct {
	args  []string
	ready func(p *exec.Cmd, stderr *testbin.SyncBuffer) bool // the signals are caught now
	want  int
}

// readyWait bounds how long interrupt waits for a command to be ready.
const readyWait = time.Minute

// interrupt starts sc as a process of this binary, waits until it
// catches signals (readyWait at the most: the signal then still goes, and
// the status tells), sends sig and returns how it exited.
func interrupt(t *testing.T, sc signalCase, sig syscall.Signal) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], sc.args...)
	cmd.Env = append(os.Environ(), asBinaryEnv+"=1")
	var stdout bytes.Buffer
	stderr := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(readyWait)
wait:
	for !sc.ready(cmd, stderr) {
		select {
		case err := <-exited:
			t.Fatalf("%q exited before it was ready (%v):\n%s", sc.args, err, stderr)
		case <-deadline:
			break wait // the signal still goes; the status will tell
		case <-time.After(20 * time.Millisecond):
		}
	}
	cmd.Process.Signal(sig)
	err := <-exited
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%q: %v", sc.args, err)
	}
	if ee != nil && ee.ProcessState.ExitCode() < 0 {
		t.Fatalf("%q died of %v instead of exiting: %s", sc.args, sig, stderr)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}
