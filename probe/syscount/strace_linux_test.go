package syscount

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/stracetest"
	"nbdscope/internal/testbin"
)

// TestAgreesWithStrace counts one run of the helper with a Counter on all
// fds and with `strace -f -c` attached to it at the same time, and wants
// the two to agree within 1% per direction, EAGAIN included. (The helper's
// only failures on these calls are EAGAIN, so strace's error column is
// its EAGAIN count.) The two windows differ by the helper's blocking read
// of stdin at either end: a call or two in thousands.
func TestAgreesWithStrace(t *testing.T) {
	eachMechanism(t, func(t *testing.T) {
		testbin.Need(t, "apt-get install strace", "strace")
		needCounting(t)
		h := startHelper(t, 4, 300)
		all := mustOpen(t, h.pid, Options{AllFDs: true})
		summary := filepath.Join(t.TempDir(), "strace.txt")
		strace := startStrace(t, h.pid, summary)
		byPair := h.run(t)
		got := mustRead(t, all)
		// SIGINT makes strace detach, write its summary and die of the signal.
		strace.Process.Signal(syscall.SIGINT)
		if err := strace.Wait(); err != nil && !killedBy(err, syscall.SIGINT) {
			t.Fatalf("strace: %v", err)
		}
		h.exit(t)
		st, err := stracetest.Read(summary)
		if err != nil {
			t.Fatal(err)
		}
		var want selfCount
		for _, c := range byPair {
			want.add(c)
		}
		for _, d := range []Dir{Recv, Send} {
			var names []string
			for s := range NumSyscalls {
				if s.Dir() == d {
					names = append(names, s.String())
				}
			}
			sum := st.Sum(names...)
			calls, errs := sum.Calls, sum.Errors
			e := got.EAGAIN(d)
			t.Logf("%s: syscount %d calls, %v EAGAIN; strace -f -c %d calls, %d errors", d, got.Calls(d), e, calls, errs)
			if !e.Exact() {
				t.Errorf("%s: EAGAIN %v on all fds is not exact", d, e)
			}
			if !stracetest.Within1Pct(got.Calls(d), calls) || !stracetest.Within1Pct(e.Min, errs) {
				t.Errorf("%s: syscount (%d calls, %v EAGAIN) and strace (%d calls, %d errors) differ by more than 1%%", d, got.Calls(d), e, calls, errs)
			}
		}
		for s := range NumSyscalls {
			t.Logf("  %-9s syscount %6d calls %6d EAGAIN; strace %6d calls %6d errors; the helper on its data fds %6d calls %6d EAGAIN",
				s, got.Of[s].Calls, got.Of[s].EAGAINAny, st[s.String()].Calls, st[s.String()].Errors, want.Calls[s], want.EAGAIN[s])
		}
	})
}

func killedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// startStrace attaches `strace -f -c` to pid, tracing the counted calls,
// and returns once it says it has attached to every thread.
func startStrace(t *testing.T, pid int, summary string) *exec.Cmd {
	t.Helper()
	var names []string
	for s := range NumSyscalls {
		names = append(names, s.String())
	}
	args := append(append([]string{"-f"}, stracetest.Columns...), "-o", summary,
		"-e", "trace="+strings.Join(names, ","), "-p", strconv.Itoa(pid))
	cmd := exec.Command("strace", args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	testbin.Start(t, cmd)
	attached := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "attached") {
				attached <- sc.Text()
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case line := <-attached:
		t.Logf("strace: %s", line)
	case <-time.After(30 * time.Second):
		t.Fatal("strace did not attach within 30s")
	}
	return cmd
}
