package child

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/clientrun"
	"nbdscope/internal/testbin"
)

// startTestExec runs argv in an exec role's loop (its calls not counted,
// no buffers asked for) and waits up to 10 s for the run to write its
// pid to file.
func startTestExec(t *testing.T, argv []string, file string) (*execRole, int) {
	t.Helper()
	r := &execRole{argv: argv, fail: make(chan error, 1), stop: make(chan struct{}), resumed: make(chan struct{}),
		callsErr: errors.New("not counted in this test"), since: time.Now()}
	r.wg.Add(2)
	go r.loop()
	go r.tick()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		r.mu.Lock()
		cur := r.cur
		r.mu.Unlock()
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && cur != nil {
			t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
			return r, pid
		}
	}
	r.close()
	t.Fatal("the client never started")
	return nil, 0
}

// TestExecCloseTermsFirst: at stop an exec side's client gets SIGTERM,
// and one that exits on it ends the stop at once (it was SIGKILLed with
// no grace: the trap never ran).
func TestExecCloseTermsFirst(t *testing.T) {
	dir := t.TempDir()
	file, termed := filepath.Join(dir, "pid"), filepath.Join(dir, "termed")
	script := `trap 'echo TERM > "$1"; exit 0' TERM; echo $$ > "$0"; sleep 1000 & wait`
	r, _ := startTestExec(t, []string{"sh", "-c", script, file, termed}, file)
	start := time.Now()
	r.close()
	took := time.Since(start)
	if b, _ := os.ReadFile(termed); strings.TrimSpace(string(b)) != "TERM" {
		t.Errorf("the client was not given SIGTERM at stop (its trap wrote %q)", b)
	}
	if took >= clientrun.GroupGrace {
		t.Errorf("stop took %v for a client that exits on SIGTERM: it waited the grace (%v)", took, clientrun.GroupGrace)
	}
}

// TestExecCloseKillsAfterGrace: a client that ignores SIGTERM is given
// clientrun.GroupGrace, then SIGKILLed with its group.
func TestExecCloseKillsAfterGrace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	r, pid := startTestExec(t, []string{"sh", "-c", `trap '' TERM; echo $$ > "$0"; sleep 1000`, file}, file)
	start := time.Now()
	r.close()
	took := time.Since(start)
	if state, _, err := testbin.ProcStat(pid); err == nil && state != 'Z' {
		t.Errorf("the client (PID %d) still runs after stop", pid)
	}
	if took < clientrun.GroupGrace {
		t.Errorf("a client that ignores SIGTERM was killed after %v, before the grace (%v)", took, clientrun.GroupGrace)
	}
}
