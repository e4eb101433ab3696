package syscount

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// nobody is the unprivileged user the permission tests run the probe as.
const nobody = 65534

// TestPermissionsAsAnotherUser runs Probe, and Open on this (root)
// process, in a child running as nobody, with the capabilities a user
// could give nbdscope, and checks the reason each combination gives. It
// needs root (to start a process as another user) and a machine where
// counting works for root.
func TestPermissionsAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the probe as another user")
	}
	needCounting(t)
	bin := worldExecutableCopy(t)
	self := os.Getpid()
	tracefsOpen := tracefsReadableByOthers()
	withParanoid(t, 2, func() {
		want := "tracefs-unreadable"
		if tracefsOpen {
			want = "perf-event-paranoid"
		}
		checkProbeAs(t, bin, nil, self, want, "")
		checkProbeAs(t, bin, []uintptr{unix.CAP_DAC_READ_SEARCH}, self, "perf-event-paranoid", "")
		checkProbeAs(t, bin, []uintptr{unix.CAP_DAC_READ_SEARCH, unix.CAP_PERFMON}, self, "ok", "ok")
	})
	// paranoid 1 lets a user count their own processes, not root's.
	withParanoid(t, 1, func() {
		checkProbeAs(t, bin, []uintptr{unix.CAP_DAC_READ_SEARCH}, self, "ok", "other-user")
	})
}

// checkProbeAs runs probeHelper as nobody with caps and wants the reasons
// Probe and Open(target) give to start with wantProbe and wantOpen (""
// when Open is not reached or not checked).
func checkProbeAs(t *testing.T, bin string, caps []uintptr, target int, wantProbe, wantOpen string) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), helperEnv+"=probe", "HELPER_TARGET="+strconv.Itoa(target))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}, AmbientCaps: caps}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe as nobody with caps %v: %v\n%s", caps, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("probe as nobody with caps %v said %q", caps, out)
	}
	t.Logf("as nobody, caps %v: Probe: %s; Open(%d): %s", caps, lines[0], target, lines[1])
	if !strings.HasPrefix(lines[0], wantProbe) {
		t.Errorf("as nobody, caps %v: Probe says %q, want %s", caps, lines[0], wantProbe)
	}
	if wantOpen != "" && !strings.HasPrefix(lines[1], wantOpen) {
		t.Errorf("as nobody, caps %v: Open says %q, want %s", caps, lines[1], wantOpen)
	}
	if wantProbe != "ok" && !strings.Contains(lines[0], "fix: ") {
		t.Errorf("as nobody, caps %v: no fix in %q", caps, lines[0])
	}
}

// worldExecutableCopy copies the test binary where nobody may run it.
func worldExecutableCopy(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "syscount-perm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "syscount.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// withParanoid runs f with kernel.perf_event_paranoid at level, and puts
// the machine's own value back at once (also when f fails the test).
func withParanoid(t *testing.T, level int, f func()) {
	t.Helper()
	const path = "/proc/sys/kernel/perf_event_paranoid"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(old)) == strconv.Itoa(level) {
		f()
		return
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(level)), 0); err != nil {
		t.Skipf("cannot set kernel.perf_event_paranoid to %d: %v", level, err)
	}
	defer func() {
		if err := os.WriteFile(path, old, 0); err != nil {
			t.Errorf("restoring kernel.perf_event_paranoid to %s: %v", old, err)
		}
	}()
	f()
}

// tracefsReadableByOthers tells whether a user without privileges can
// read the tracepoint ids (a tracefs mounted or changed to allow it).
func tracefsReadableByOthers() bool {
	tp, err := loadTracepoints()
	if err != nil {
		return false
	}
	for _, p := range []string{tp.dir, tp.dir + "/events", tp.dir + "/events/syscalls", tp.dir + "/events/syscalls/sys_enter_read"} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o005 != 0o005 {
			return false
		}
	}
	st, err := os.Stat(tp.dir + "/events/syscalls/sys_enter_read/id")
	return err == nil && st.Mode().Perm()&0o004 != 0
}
