package syscount

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnescapeMount: /proc/mounts writes a backslash in a path as \134
// (and a space as \040); a backslash not followed by three octal digits
// stays as it is.
func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`a\134b\0`); got != `a\b\0` {
		t.Errorf("unescape gives %q", got)
	}
}

// TestTracefsCandidates: the standard places first, then the other
// tracefs mounts, by their unescaped paths; a path is compared whole, so
// that one with a space is not read as two.
func TestTracefsCandidates(t *testing.T) {
	for mounts, want := range map[string][]string{
		"sysfs /sys sysfs rw 0 0\n" +
			"tracefs /mnt/my\\040trace tracefs rw 0 0\n" +
			"tracefs /sys/kernel/tracing tracefs rw 0 0\n" +
			"debugfs /sys/kernel/debug debugfs rw 0 0\n": {"/sys/kernel/tracing", "/sys/kernel/debug/tracing", "/mnt/my trace"},
		"sysfs /sys sysfs rw 0 0\n":                               {},
		"debugfs /sys/kernel/debug debugfs rw 0 0\n":              {"/sys/kernel/debug/tracing"},
		"tracefs /sys/kernel/debug/tracing tracefs rw 0 0\nbad\n": {"/sys/kernel/debug/tracing"},
	} {
		if got := tracefsCandidates(mounts); !slices.Equal(got, want) {
			t.Errorf("candidates of %q: %q, want %q", mounts, got, want)
		}
	}
}

// TestTracefsReasons reads ids from fake tracefs directories: none
// mounted, one without syscall tracepoints, one with them (recvmmsg and
// sendmmsg missing).
func TestTracefsReasons(t *testing.T) {
	var u *Unavailable
	if _, err := loadTracepointsIn(nil); !errors.As(err, &u) || u.Reason != ReasonTracefsNotMounted || !strings.Contains(u.Fix, "mount -t tracefs nodev /sys/kernel/tracing") {
		t.Errorf("nothing mounted: %v", err)
	}
	bare := t.TempDir()
	os.Mkdir(filepath.Join(bare, "events"), 0o755)
	if _, err := loadTracepointsIn([]string{bare}); !errors.As(err, &u) || u.Reason != ReasonNoSyscallTracepoints || u.Fix != "" {
		t.Errorf("no syscall tracepoints: %v", err)
	}
	full := t.TempDir()
	for s := range NumSyscalls {
		if s == Recvmmsg || s == Sendmmsg {
			continue
		}
		for i, kind := range []string{"sys_enter_", "sys_exit_"} {
			d := filepath.Join(full, "events", "syscalls", kind+s.String())
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, "id"), []byte(fmt.Sprintf("%d\n", 100+2*int(s)+i)), 0o644)
		}
	}
	tp, err := loadTracepointsIn([]string{bare, full})
	if err != nil {
		t.Fatal(err)
	}
	if tp.dir != full || tp.enter[Recvmsg] != 106 || tp.exit[Recvmsg] != 107 || tp.enter[Recvmmsg] != 0 {
		t.Errorf("read %+v", tp)
	}
	if present, missing := chooseCalls(tp, nil); len(present) != 8 || fmt.Sprint(missing) != "[recvmmsg sendmmsg]" {
		t.Errorf("present %v, missing %v", present, missing)
	}
	if present, missing := chooseCalls(tp, []Syscall{Recvmsg, Recvmmsg}); fmt.Sprint(present, missing) != "[recvmsg] [recvmmsg]" {
		t.Errorf("asked recvmsg and recvmmsg: present %v, missing %v", present, missing)
	}
	os.WriteFile(filepath.Join(full, "events", "syscalls", "sys_enter_read", "id"), []byte("x\n"), 0o644)
	if _, err := loadTracepointsIn([]string{full}); err == nil || errors.As(err, &u) {
		t.Errorf("a bad id: %v, want a plain error", err)
	}
	if got := groupReadableFix(debugTracefsDir, 7); got != "sudo mount -t tracefs -o mode=750,gid=7 nodev /sys/kernel/tracing" {
		t.Errorf("fix for debugfs's tracefs: %q", got)
	}
}

// TestPermissionReasons: each refusal of perf_event_open is explained by
// the facts, with its fix.
func TestPermissionReasons(t *testing.T) {
	base := perms{paranoid: 1, hasParanoid: true, uid: 1000, ownerUID: 1000, statusUID: 1000, exe: "/bin/nbdscope", userOnly: true}
	for _, c := range []struct {
		name string
		p    func(p *perms)
		want Reason
		fix  string
	}{
		{"paranoid 3 (Debian)", func(p *perms) { p.paranoid = 3 }, ReasonParanoid, "sudo sysctl -w kernel.perf_event_paranoid=2"},
		{"paranoid 2, counters that need the kernel", func(p *perms) { p.paranoid, p.userOnly = 2, false }, ReasonParanoid, "sudo sysctl -w kernel.perf_event_paranoid=1"},
		{"paranoid 2 allows user-only counters: seccomp", func(p *perms) { p.paranoid = 2 }, ReasonBlocked, ""},
		{"paranoid 3 but counting oneself works: the owner", func(p *perms) { p.paranoid, p.selfAllowed, p.ownerUID, p.statusUID = 3, true, 0, 0 }, ReasonOtherUser, "sudo setcap cap_perfmon+ep /bin/nbdscope"},
		{"paranoid 3 and another user's process: the level first", func(p *perms) { p.paranoid, p.ownerUID, p.statusUID = 3, 0, 0 }, ReasonParanoid, "sudo sysctl -w kernel.perf_event_paranoid=2"},
		{"another user's process", func(p *perms) { p.ownerUID, p.statusUID = 0, 0 }, ReasonOtherUser, "sudo setcap cap_perfmon+ep /bin/nbdscope"},
		{"not dumpable", func(p *perms) { p.ownerUID = 0 }, ReasonOtherUser, "sudo setcap cap_perfmon+ep /bin/nbdscope"},
		{"allowed on paper: seccomp", func(p *perms) {}, ReasonBlocked, "docker run --cap-add PERFMON …"},
		{"CAP_PERFMON but refused", func(p *perms) { p.perfmon, p.paranoid, p.ownerUID = true, 2, 0 }, ReasonBlocked, ""},
	} {
		p := base
		c.p(&p)
		var u *Unavailable
		err := permissionError(unix.EACCES, 42, p)
		if !errors.As(err, &u) || u.Reason != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if c.fix != "" && !strings.HasPrefix(u.Fix, c.fix) {
			t.Errorf("%s: fix %q, want %q", c.name, u.Fix, c.fix)
		}
		if !errors.Is(err, unix.EACCES) {
			t.Errorf("%s: the system's error is lost", c.name)
		}
	}
	p := base
	p.ownerUID = 0
	err := permissionError(unix.EACCES, 42, p)
	if !strings.Contains(err.Error(), "not dumpable") {
		t.Errorf("a same-uid process owned by root: %v, want not dumpable", err)
	}
}

func TestStatusField(t *testing.T) {
	st := "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t000001ffffffffff\n"
	if v, ok := statusField(st, "Uid:"); !ok || v != "1000" {
		t.Errorf("Uid: %q %v", v, ok)
	}
	if _, ok := statusField(st, "Gid:"); ok {
		t.Error("found a missing field")
	}
}
