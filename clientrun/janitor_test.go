package clientrun

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

const helperEnv = "CLIENTRUN_TEST_HELPER"

// helperRoles are the roles the test binary plays when started as a
// helper; a platform's tests add theirs (init).
var helperRoles = map[string]func() int{"guard": guardHelper}

func TestMain(m *testing.M) { testbin.Roles(m, helperEnv, helperRoles) }

// guardHelper starts a forking client (sh with a job in the background)
// through Start, and a group of its own that it guards and releases; it
// guards directory KEEP_DIR and releases it, guards GONE_DIR, prints the
// client's and the released group's PIDs, and waits to be killed.
func guardHelper() int {
	p, err := Start([]string{"sh", "-c", "sleep 1000 & wait"})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	other := exec.Command("sleep", "1001")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	Guard(other.Process.Pid)
	Release(other.Process.Pid)
	GuardDir(os.Getenv("KEEP_DIR"))
	ReleaseDir(os.Getenv("KEEP_DIR"))
	GuardDir(os.Getenv("GONE_DIR"))
	fmt.Println(p.Pid(), other.Process.Pid)
	time.Sleep(time.Minute)
	return 0
}

// TestJanitorAfterKill9: a process killed outright leaves nothing of the
// groups it still had running, a forking client's background job
// included, and none of its directories; a group or a directory it had
// released is not touched (issue 33: kill -9 of sweep --exec left the
// client's shell, its job and nbdscope-exec-NNN behind).
func TestJanitorAfterKill9(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	keep, gone := filepath.Join(dir, "keep"), filepath.Join(dir, "gone dir")
	for _, d := range []string{keep, gone} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h := testbin.StartHelper(t, testbin.HelperCommand(os.Args[0], helperEnv, "guard", "KEEP_DIR="+keep, "GONE_DIR="+gone))
	f := strings.Fields(h.Line(t))
	if len(f) != 2 {
		t.Fatalf("helper said %q", f)
	}
	sh, _ := strconv.Atoi(f[0])
	released, _ := strconv.Atoi(f[1])
	t.Cleanup(func() { syscall.Kill(released, syscall.SIGKILL) })
	var job []int
	for deadline := time.Now().Add(10 * time.Second); len(job) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		job, _ = testbin.ChildPIDs(sh)
	}
	if len(job) == 0 {
		t.Fatal("the client's background job never started")
	}
	t.Cleanup(func() { syscall.Kill(job[0], syscall.SIGKILL) })
	h.Cmd.Process.Kill()
	h.Cmd.Wait()
	deadline := time.Now().Add(GroupGrace + 5*time.Second)
	for (running(job[0]) || exists(gone)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if running(job[0]) {
		t.Errorf("the client's background job (PID %d) still runs after its owner's kill -9", job[0])
	}
	if exists(gone) {
		t.Errorf("%s is still there after its owner's kill -9", gone)
	}
	if !running(released) {
		t.Errorf("the released group (PID %d) was killed", released)
	}
	if !exists(keep) {
		t.Errorf("the released directory %s was removed", keep)
	}
}

func running(pid int) bool {
	state, _, err := testbin.ProcStat(pid)
	return err == nil && state != 'Z'
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
