package syscount

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestTracefsCandidates(t *testing.T) {
	mounts := "sysfs /sys sysfs rw 0 0\n" +
		"tracefs /sys/kernel/tracing tracefs rw 0 0\n" +
		"tracefs /mnt/my\\040trace tracefs rw 0 0\n" +
		"debugfs /sys/kernel/debug debugfs rw 0 0\n"
	got := fmt.Sprint(tracefsCandidates(mounts))
	if want := "[/sys/kernel/tracing /sys/kernel/debug/tracing /mnt/my trace]"; got != want {
		t.Errorf("candidates %s, want %s", got, want)
	}
	if got := unescapeMount(`a\134b\0`); got != `a\b\0` {
		t.Errorf("unescape gives %q", got)
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
