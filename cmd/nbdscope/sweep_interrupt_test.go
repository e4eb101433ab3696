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

	"nbdscope/model"
)

// TestSweepHeaderCounts: the header says "median of 3" only when every row
// had its 3; a sweep cut short says what its rows are the median of, with
// each row's count in a measured column when they differ. The same holds
// for an exec sweep's table.
func TestSweepHeaderCounts(t *testing.T) {
	withCounts := func(rep model.SweepReport, counts ...int) model.SweepReport {
		rep.Rows = append([]model.SweepRow(nil), rep.Rows[:len(counts)]...)
		for i, n := range counts {
			rep.Rows[i].Repeats = n
		}
		return rep
	}
	execRep := func(rep model.SweepReport) model.SweepReport {
		rep.Spec.Exec = &model.ExecSpec{Command: "qemu-img convert {uri} null", Warmup: 1}
		for i := range rep.Rows {
			rep.Rows[i].Exec = &model.ExecRow{}
			rep.Rows[i].Figures.Server = &model.Process{}
		}
		return rep
	}
	for _, c := range []struct {
		name   string
		rep    model.SweepReport
		header string
		cells  []string // each row's measured cell; none: no column
	}{
		{"complete", withCounts(madeUpSweep(), 3, 3, 3), "median of 3;", nil},
		{"cut short alike", withCounts(madeUpSweep(), 1, 1), "median of 1 (3 asked);", nil},
		{"cut short unlike", withCounts(madeUpSweep(), 2, 1, 1), "median of the measurements each row had, of 3 asked (the measured column)",
			[]string{"| 2 of 3 |", "| 1 of 3 |", "| 1 of 3 |"}},
		{"exec complete", execRep(withCounts(madeUpSweep(), 3, 3)), "median of 3 (min–max) after 1 warm-up", nil},
		{"exec cut short", execRep(withCounts(madeUpSweep(), 2, 1)), "median of the runs each row had, of 3 asked (the measured column) (min–max)",
			[]string{"| 2 of 3 |", "| 1 of 3 |"}},
	} {
		if c.rep.Spec.Exec == nil && len(c.rep.Rows) > 0 {
			c.rep.Rows[0].Placement = model.Placement{Setting: "split", LoadCPUs: "0", ServerCPUs: "1"}
		}
		var b bytes.Buffer
		writeSweepTable(&b, c.rep)
		out := b.String()
		if !strings.Contains(out, c.header) {
			t.Errorf("%s: header does not say %q:\n%s", c.name, c.header, out)
		}
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| buffer size") {
				rows = append(rows, l)
			}
		}
		if has := strings.Contains(out, " measured |"); has != (c.cells != nil) {
			t.Errorf("%s: measured column %v, want %v:\n%s", c.name, has, c.cells != nil, out)
		}
		for i, cell := range c.cells {
			if i >= len(rows) || !strings.HasSuffix(rows[i], cell) {
				t.Errorf("%s: row %d does not end %q:\n%s", c.name, i, cell, out)
			}
		}
	}
}

// TestSweepSignals: a sweep stopped by SIGTERM says "terminated", by
// SIGINT "interrupted" (never "context canceled"), exits 130 and prints
// the rows it has, each with the count it had.
func TestSweepSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real NBD sides")
	}
	home := storeCmdHome(t)
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
			errs := &lockedBuf{}
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
