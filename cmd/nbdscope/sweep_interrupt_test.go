package main

import (
	"bytes"
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
	home := realSidesHome(t)
	for _, c := range []struct {
		sig  syscall.Signal
		word string
		name string
	}{{syscall.SIGTERM, "terminated", "SIGTERM"}, {syscall.SIGINT, "interrupted", "SIGINT"}} {
		t.Run(c.name, func(t *testing.T) {
			// 200 measurements: far more than come before the signal.
			args := append(append([]string(nil), sweepSmall...), "--bytes", "64m", "--repeat", "100")
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), asBinaryEnv+"=1", "NBDSCOPE_HOME="+home)
			var out bytes.Buffer
			errs := &testbin.SyncBuffer{}
			cmd.Stdout, cmd.Stderr = &out, errs
			cmd.SysProcAttr = childAttrs()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var err error
			go func() { err = cmd.Wait(); close(exited) }()
			defer func() {
				cmd.Process.Kill()
				<-exited
			}()
			deadline := time.After(60 * time.Second)
			for !strings.Contains(errs.String(), "repeat 1/100") {
				select {
				case <-exited:
					t.Fatalf("sweep exited before its first measurement (%v):\n%s", err, errs)
				case <-deadline:
					t.Fatalf("no measurement within 60s:\n%s", errs)
				case <-time.After(10 * time.Millisecond):
				}
			}
			cmd.Process.Signal(c.sig)
			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				t.Fatalf("still running 60s after %s:\n%s", c.name, errs)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Errorf("exit %v, want %d", err, exitInterrupted)
			}
			m := regexp.MustCompile(`nbdscope: sweep ` + c.word + ` after (\d+) of 200 measurements \(` + c.name + `\)\n`).FindStringSubmatch(errs.String())
			if m == nil || strings.Contains(errs.String(), "context canceled") {
				t.Fatalf("stderr does not say %q:\n%s", c.word, errs)
			}
			so := out.String()
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
