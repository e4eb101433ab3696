package interop

// A local --target measured (issue 23 §5): the process behind a unix
// socket the user started is found and measured as a real server side.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/phrase"
	"nbdscope/probe/realproc"
)

// startOwnQemuNbd starts qemu-nbd on a socket of its own, leading its own
// process group as a daemon does, and waits (bounded) until it listens.
// It is killed at the test's end.
func startOwnQemuNbd(t *testing.T) (sock string, pid int) {
	t.Helper()
	sock = filepath.Join(testbin.ShortDir(t), "q.sock")
	cmd := exec.Command("qemu-nbd", "-r", "-t", "-e", "0", "-f", "raw", "-k", sock, `json:{"file":{"driver":"null-co","size":4294967296}}`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	testbin.Start(t, cmd)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return sock, cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("qemu-nbd did not listen on %s within 10s", sock)
		}
	}
}

// TestLocalTargetMeasured: side B targets a qemu-nbd the test started.
// Its server figures are counted (they were n/a for every target), a
// warning names its PID and command, and it still runs after nbdscope
// ends (it is not ours to stop).
func TestLocalTargetMeasured(t *testing.T) {
	need(t, "qemu-nbd")
	needCounting(t)
	sock, pid := startOwnQemuNbd(t)
	rep, r := runReport(t, 0, "--target-b", "nbd+unix:///?socket="+sock, "--duration", "3s")
	srv := rep.Sides[1].Summary.Server
	if srv == nil || !srv.SendCallsPer2MiB.Known() || srv.SendCalls == 0 || !srv.CoresBusy.Known() || !srv.VolCSPer2MiB.Known() {
		t.Fatalf("B's target server figures: %+v\n%s", srv, r)
	}
	// qemu-nbd sends a 2 MiB reply in at least one call.
	if srv.SendCallsPer2MiB+srv.SendEAGAINPer2MiB < 1 {
		t.Errorf("qemu-nbd's send calls per 2 MiB %.2f (+ EAGAIN %.2f): want at least one", srv.SendCallsPer2MiB, srv.SendEAGAINPer2MiB)
	}
	named := false
	for _, w := range rep.Warnings {
		if w.Side == "B" && strings.Contains(phrase.WarningLong(w), fmt.Sprintf("PID %d (qemu-nbd ", pid)) {
			named = true
		}
	}
	if !named {
		t.Errorf("no warning names qemu-nbd's PID %d and command: %+v", pid, rep.Warnings)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("qemu-nbd (PID %d) is gone after the run: %v", pid, err)
	}
}

// TestLocalTargetBothSides: --target for both sides, one qemu-nbd serving
// both (the usual way to point nbdscope at a server). Each side's
// warning names its side, and each side's server figures are the
// process's in that side's turns: the samples in which a side's load did
// not run carry (nearly) none of its server's calls, where they carried
// the other side's, so that both sides showed the whole process's. The
// sides' calls together stay within qemu-nbd's own (they were 14% over
// when the sample at each turn boundary gave each side all of them), and
// are nearly all of them: qemu-nbd is read at each switch, between the
// outgoing load's pause and the incoming one's resume, so no sample spans
// both loads (the boundary samples were left to neither side: 84% of
// qemu-nbd's sendmsg calls given, 7 of 40 samples per side n/a).
func TestLocalTargetBothSides(t *testing.T) {
	need(t, "qemu-nbd")
	needCounting(t)
	sock, pid := startOwnQemuNbd(t)
	whole, err := realproc.OpenCalls(pid)
	if err != nil {
		t.Fatalf("counting qemu-nbd's calls: %v", err)
	}
	rep, r := runReport(t, 0, "--target", "nbd+unix:///?socket="+sock, "--mode", "alternate", "--duration", "4s")
	total := whole.Close()
	var sends uint64
	for _, sr := range rep.Sides {
		if sr.Summary.Server != nil {
			sends += sr.Summary.Server.SendCalls
		}
	}
	t.Logf("A's and B's server send calls together %d; qemu-nbd's own %d", sends, total.SendCalls)
	if sends == 0 || sends > total.SendCalls || float64(sends) < 0.97*float64(total.SendCalls) {
		t.Errorf("A's and B's server send calls together %d; qemu-nbd's own over the run %d: want them within it and at least 97%% of it", sends, total.SendCalls)
	}
	for _, side := range []string{"A", "B"} {
		named := false
		for _, w := range rep.Warnings {
			if string(w.Side) == side && strings.HasPrefix(phrase.WarningLong(w), "side "+side+": ") && strings.Contains(phrase.WarningLong(w), fmt.Sprintf("PID %d", pid)) {
				named = true
			}
		}
		if !named {
			t.Errorf("no warning of side %s names it and qemu-nbd's PID %d: %+v", side, pid, rep.Warnings)
		}
	}
	var idle, all uint64
	for _, s := range rep.Samples {
		if s.Server == nil {
			continue
		}
		all += s.Server.SendCalls
		if s.Bytes == 0 && !s.Active {
			idle += s.Server.SendCalls
		}
	}
	if all == 0 {
		t.Fatalf("no server send calls counted:\n%s", r)
	}
	if idle*20 > all {
		t.Errorf("%d of the %d server send calls are in samples in which the side's load did not run: they are the other side's", idle, all)
	}
}
