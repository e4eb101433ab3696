package syscount

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// TestPermissionsAsAnotherUser runs Probe, and Open on this (root)
// process, in a child running as nobody, with and without capabilities,
// at kernel.perf_event_paranoid 2 and 3; checks the reason each gives; and
// runs the fix each one names (as root, without its sudo) to see that it
// lifts it. tracefs's mount options and the paranoid level are put back.
// It needs root and a machine where counting works for root.
func TestPermissionsAsAnotherUser(t *testing.T) {
	bin := testbin.WorldExecutableCopy(t, "syscount") // skips without root
	needCounting(t)
	self := os.Getpid()
	dac := []uintptr{unix.CAP_DAC_READ_SEARCH} // reads tracefs as root would
	withParanoid(t, 2, func() {
		if tracefsReadableByOthers() {
			t.Log("tracefs is readable by others here: the unreadable case is not checked")
		} else {
			_, fix := checkProbeAs(t, bin, nil, self, "tracefs-unreadable", "")
			withTracefsRestored(t, func() {
				if runFix(t, fix) {
					checkProbeAs(t, bin, nil, self, "ok", "other-user")
				}
			})
		}
		checkProbeAs(t, bin, dac, self, "ok", "other-user")
	})
	// Debian's kernels forbid unprivileged perf at 3; upstream ones read
	// 3 as 2, and then it is the target's owner that is named.
	withParanoid(t, 3, func() {
		reason, fix := checkProbeAs(t, bin, dac, self, "", "other-user")
		switch reason {
		case "ok":
			t.Log("this kernel reads kernel.perf_event_paranoid 3 as 2 (upstream)")
		case "perf-event-paranoid":
			if fix != "sudo sysctl -w kernel.perf_event_paranoid=2" {
				t.Errorf("fix %q, want paranoid 2", fix)
			}
			if runFix(t, fix) { // withParanoid puts the level back
				checkProbeAs(t, bin, dac, self, "ok", "other-user")
			}
		default:
			t.Errorf("at paranoid 3: %s", reason)
		}
		checkProbeAs(t, bin, append(dac, unix.CAP_PERFMON), self, "ok", "ok")
	})
	checkBPFAs(t, bin, append(dac, unix.CAP_PERFMON), "CAP_BPF")
	checkBPFAs(t, bin, append(dac, unix.CAP_PERFMON, unix.CAP_BPF), "")
}

// checkBPFAs runs probeHelper as nobody with caps and wants
// WhyNotPerProcess to name want ("": to be empty: bpf loads).
func checkBPFAs(t *testing.T, bin string, caps []uintptr, want string) {
	t.Helper()
	out := testbin.RunAsNobody(t, bin, caps, helperEnv, "probe")
	_, why, _ := strings.Cut(strings.TrimSpace(out), "bpf\t")
	t.Logf("as nobody, caps %v: counting per process: %q", caps, why)
	if want == "" && why != "" || want != "" && !strings.Contains(why, want) {
		t.Errorf("as nobody with caps %v, why not per process: %q, want %q", caps, why, want)
	}
}

// checkProbeAs runs probeHelper as nobody with caps and wants the reasons
// Probe and Open(target) give to be wantProbe and wantOpen ("": not
// checked; Open's is checked only where Probe says ok). It returns
// Probe's reason and the fix it names.
func checkProbeAs(t *testing.T, bin string, caps []uintptr, target int, wantProbe, wantOpen string) (reason, fix string) {
	t.Helper()
	out := testbin.RunAsNobody(t, bin, caps, helperEnv, "probe", "HELPER_TARGET="+strconv.Itoa(target))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("probe as nobody with caps %v said %q", caps, out)
	}
	t.Logf("as nobody, caps %v: Probe: %s; Open(%d): %s", caps, lines[0], target, lines[1])
	probe, open := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	if wantProbe != "" && probe[0] != wantProbe {
		t.Errorf("as nobody, caps %v: Probe says %q, want %s", caps, lines[0], wantProbe)
	}
	if wantOpen != "" && probe[0] == "ok" && open[0] != wantOpen {
		t.Errorf("as nobody, caps %v: Open says %q, want %s", caps, lines[1], wantOpen)
	}
	if probe[0] == "ok" {
		return "ok", ""
	}
	if len(probe) < 3 || probe[1] == "" {
		t.Errorf("as nobody, caps %v: no fix in %q", caps, lines[0])
		return probe[0], ""
	}
	return probe[0], probe[1]
}

// runFix runs a fix command as this (root) process, without its sudo, and
// tells whether it ran (a container may forbid a remount even to root:
// then the fix is not checked here).
func runFix(t *testing.T, fix string) bool {
	t.Helper()
	cmd := exec.Command("sh", "-c", strings.TrimPrefix(fix, "sudo "))
	cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/sbin:"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("the fix %q cannot run here (%v: %s): not checked", fix, err, out)
		return false
	}
	return true
}

// withTracefsRestored runs f, then puts tracefs's root mode and group
// back as they were.
func withTracefsRestored(t *testing.T, f func()) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(tracefsDir, &st); err != nil {
		t.Fatal(err)
	}
	defer func() {
		opts := fmt.Sprintf("remount,mode=%o,gid=%d", st.Mode&0o7777, st.Gid)
		if out, err := exec.Command("mount", "-o", opts, tracefsDir).CombinedOutput(); err != nil {
			t.Errorf("restoring tracefs (%s): %v\n%s", opts, err, out)
		}
	}()
	f()
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
