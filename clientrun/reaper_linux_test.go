package clientrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"nbdscope/internal/testbin"
)

// escapingClient is a client that leaves its process group: a job in a
// session of its own (setsid), whose pid it writes to file, then lives
// for linger.
func escapingClient(file, linger string) []string {
	return []string{"sh", "-c", `setsid sleep 1000 & echo $! > "$0"; ` + linger, file}
}

// escapedPID reads the pid the escaping client wrote, waiting up to 10 s.
func escapedPID(t testing.TB, file string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		}
	}
	t.Fatalf("the client never wrote its job's pid to %s", file)
	return 0
}

// goneWithin waits up to d for pid to end; false if it still runs.
func goneWithin(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); running(pid) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	return !running(pid)
}

// TestEscapedJobKilledAtEnd: a job that left the client's group with
// setsid is killed when the client's run ends, whether it was seen
// escaping while the client ran (linger 0.5 s) or only found adopted after
// (the client exits at once). Without the reaper it ran on under PID 1.
func TestEscapedJobKilledAtEnd(t *testing.T) {
	for _, linger := range []string{"sleep 0.5", "exit 0"} {
		t.Run(linger, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pid")
			p, err := Start(escapingClient(file, linger))
			if err != nil {
				t.Fatal(err)
			}
			job := escapedPID(t, file)
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			if !goneWithin(job, 5*time.Second) {
				t.Errorf("the client's setsid job (PID %d) still runs after the client's end", job)
			}
		})
	}
}

// TestEscapedJobKilledAtRunEnd: the same through Run (a sweep's client).
func TestEscapedJobKilledAtRunEnd(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	if _, err := Run(t.Context(), escapingClient(file, "sleep 0.3"), nil); err != nil {
		t.Fatal(err)
	}
	job := escapedPID(t, file)
	if !goneWithin(job, 5*time.Second) {
		t.Errorf("the client's setsid job (PID %d) still runs after Run returned", job)
	}
}

func init() { helperRoles["escape"] = escapeHelper }

// escapeHelper starts an escaping client, waits (up to 10 s) until the
// reaper has seen its job leave the group, prints the job's pid and
// whether the escape was seen, and waits to be killed.
func escapeHelper() int {
	file := os.Getenv("PID_FILE")
	if _, err := Start(escapingClient(file, "wait")); err != nil {
		fmt.Println(err)
		return 1
	}
	seen, job := false, ""
	for deadline := time.Now().Add(10 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		job = strings.TrimSpace(string(b))
		theReaper.mu.Lock()
		seen = len(theReaper.escaped) > 0 && job != ""
		theReaper.mu.Unlock()
	}
	fmt.Println(job, seen)
	time.Sleep(time.Minute)
	return 0
}

// TestEscapedJobAfterKill9: the janitor, told of the escape when it was
// seen, kills the setsid job after its owner's kill -9.
func TestEscapedJobAfterKill9(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	h := testbin.StartHelper(t, testbin.HelperCommand(os.Args[0], helperEnv, "escape", "PID_FILE="+file))
	f := strings.Fields(h.Line(t))
	job, err := strconv.Atoi(f[0])
	if err != nil || len(f) != 2 {
		t.Fatalf("helper said %q", f)
	}
	t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
	if f[1] != "true" {
		t.Log("the helper never saw its client's job escape")
	}
	h.Cmd.Process.Kill()
	h.Cmd.Wait()
	if !goneWithin(job, GroupGrace+5*time.Second) {
		t.Errorf("the client's setsid job (PID %d) still runs after its owner's kill -9", job)
	}
}

// subreaper says whether this process is a child subreaper now.
func subreaper(t *testing.T) bool {
	var on int32
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, 37 /* PR_GET_CHILD_SUBREAPER */, uintptr(unsafe.Pointer(&on)), 0); e != 0 {
		t.Fatalf("PR_GET_CHILD_SUBREAPER: %v", e)
	}
	return on != 0
}

// TestSubreaperOnlyWhileGroupsRun: a process is a subreaper while a group
// it started runs, and is not once nothing is left to follow, so that an
// orphan of anything else it starts (a child's janitor) goes to PID 1,
// which reaps it, and not to a process that never would.
func TestSubreaperOnlyWhileGroupsRun(t *testing.T) {
	p, err := Start([]string{"sleep", "0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if !subreaper(t) {
		t.Error("not a subreaper while a group it started runs")
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	on := true
	for deadline := time.Now().Add(5 * time.Second); on && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		on = subreaper(t)
	}
	if on {
		t.Error("still a subreaper 5 s after its last group ended")
	}
}
