package interop

// A real target that dies under `nbdscope run` (issue 11, part 2).

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// socketFDs is the set of sockets a process holds open (Linux; nil
// elsewhere), by their "socket:[inode]" names.
func socketFDs(pid int) map[string]bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	socks := map[string]bool{}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			socks[l] = true
		}
	}
	return socks
}

// newSocket reports whether pid holds a socket that is not in base.
func newSocket(pid int, base map[string]bool) bool {
	for s := range socketFDs(pid) {
		if !base[s] {
			return true
		}
	}
	return false
}

// TestRunTargetKilled: `nbdscope run --target-a` a qemu-nbd that is killed
// with SIGKILL while side A writes to it. The run says which target was
// lost and why, still prints its report marked partial, and exits 1.
// Before the fix it printed "side A load died (exit status 0): (no output)"
// and exited 0.
func TestRunTargetKilled(t *testing.T) {
	need(t, "qemu-nbd")
	sock := filepath.Join(testbin.ShortDir(t), "q.sock")
	q := startProc(t, procSpec{name: "qemu-nbd", network: "unix", address: sock,
		args: []string{"--image-opts", "driver=null-co,size=1G", "-k", sock, "-t", "-e", "4"}})
	uri := unixURI(sock, "")
	base := socketFDs(q.cmd.Process.Pid)

	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nbdscopeBin, "run", "--target-a", uri, "--workload-a", "write",
		"--mode", "concurrent", "--duration", "5s", "--interval", "100ms", "--json")
	var stdout, stderr testbin.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Kill qemu-nbd once the load is connected to it (it holds a socket
	// it did not hold before), then a moment later, with writes flowing.
	// Sockets, not a count of them: the connection startProc probed with
	// may still be open in base, and its close would hide the load's.
	// The run's clock starts after the load connected, so the kill lands
	// within its 5 s.
	for end := time.Now().Add(30 * time.Second); !newSocket(q.cmd.Process.Pid, base); {
		if time.Now().After(end) {
			t.Fatalf("nbdscope run did not connect to qemu-nbd within 30 s\nstderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	q.cmd.Process.Kill()
	<-q.exited
	q.stopped = true // killed on purpose: its cleanup has nothing to stop
	q.cancel()

	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Fatalf("nbdscope run did not end within %v\nstderr: %s", cmdTimeout, stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	errText := stderr.String()
	if code != 1 {
		t.Errorf("exit status %d, want 1\nstderr: %s", code, errText)
	}
	if !strings.Contains(errText, "side A load died (exit status 1): target "+uri+": connection lost") {
		t.Errorf("stderr does not name the lost target %s:\n%s", uri, errText)
	}
	var rep struct {
		Partial       bool   `json:"partial"`
		PartialReason string `json:"partial_reason"`
		Crashes       []struct {
			Side, Role, Target string
		} `json:"crashes"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("run --json output: %v\n%s", err, stdout.String())
	}
	if !rep.Partial || !strings.Contains(rep.PartialReason, uri) || len(rep.Crashes) != 1 || rep.Crashes[0].Target != uri {
		t.Errorf("report: partial=%v reason %q crashes %+v", rep.Partial, rep.PartialReason, rep.Crashes)
	}
	t.Logf("stderr:\n%s", errText)
}
