package sockctl

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// TestAnotherUserIsRefused: as nobody, changing a buffer of this (root)
// process is refused with ReasonOtherUser and a fix; as root, changing
// nobody's is allowed.
func TestAnotherUserIsRefused(t *testing.T) {
	bin := testbin.WorldExecutableCopy(t, "sockctl")
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	before, _ := unix.GetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF)
	out := testbin.RunAsNobody(t, bin, nil, helperEnv, "tryset", "HELPER_TARGET="+strconv.Itoa(os.Getpid()), "HELPER_FD="+strconv.Itoa(pair[0]))
	t.Logf("as nobody: %s", out)
	if !strings.HasPrefix(out, "other-user\t") || !strings.Contains(out, "fix: sudo ") {
		t.Errorf("as nobody, on root's process: %q, want other-user with a fix", out)
	}
	if after, _ := unix.GetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF); after != before {
		t.Errorf("the refused change changed the buffer: %d -> %d", before, after)
	}
	h := startHolder(t, bin, testbin.AsNobody(nil))
	p, err := Open(h.pid)
	if err != nil {
		t.Fatalf("root on nobody's process: %v", err)
	}
	defer p.Close()
	if _, err := p.Set(h.fd, SendBuf, 1<<20); err != nil {
		t.Errorf("root on nobody's process: %v", err)
	}
}

// TestExplainRefusal: each rule that refuses pidfd_getfd, from the facts.
func TestExplainRefusal(t *testing.T) {
	base := facts{uid: 1000, gid: 1000, targetUIDs: []int{1000, 1000, 1000}, targetGIDs: []int{1000, 1000, 1000}, ownerUID: 1000, yama: 0, prog: "nbdscope"}
	for _, c := range []struct {
		name string
		f    func(f *facts)
		want Reason
		fix  string
		why  string
	}{
		{"another user", func(f *facts) { f.targetUIDs, f.ownerUID = []int{0, 0, 0}, 0 }, ReasonOtherUser, "sudo nbdscope …", "runs as uid 0"},
		{"a setgid process", func(f *facts) { f.targetGIDs = []int{1000, 5, 5} }, ReasonOtherUser, "sudo nbdscope …", "gid 1000/5/5"},
		{"not dumpable", func(f *facts) { f.ownerUID = 0 }, ReasonNotDumpable, "sudo nbdscope …", "not dumpable"},
		{"yama 1, not an ancestor", func(f *facts) { f.yama = 1 }, ReasonYama, "sudo sysctl -w kernel.yama.ptrace_scope=0", "ptrace_scope is 1"},
		{"yama 1, an ancestor: something else", func(f *facts) { f.yama, f.ancestor = 1, true }, ReasonDenied, "", "security module"},
		{"yama 1, CAP_SYS_PTRACE: something else", func(f *facts) { f.yama, f.capSysPtrace = 1, true }, ReasonDenied, "", "security module"},
		{"yama 2", func(f *facts) { f.yama, f.ancestor = 2, true }, ReasonYama, "sudo nbdscope …", "ptrace_scope is 2"},
		{"yama 3, even as root", func(f *facts) { f.yama, f.capSysPtrace, f.uid = 3, true, 0 }, ReasonYama, "", "until the next boot"},
		{"root on another user: something else", func(f *facts) { f.capSysPtrace, f.targetUIDs = true, []int{5, 5, 5} }, ReasonDenied, "", "security module"},
		{"no Yama, same user: something else", func(f *facts) { f.yama = -1 }, ReasonDenied, "", "security module"},
	} {
		f := base
		c.f(&f)
		err := explainRefusal(unix.EPERM, 42, 7, f)
		var e *Error
		if !errors.As(err, &e) || e.Reason != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if e.Fix != c.fix || !strings.Contains(e.Why, c.why) {
			t.Errorf("%s: why %q, fix %q; want %q in why, fix %q", c.name, e.Why, e.Fix, c.why, c.fix)
		}
		if !errors.Is(err, unix.EPERM) || e.PID != 42 || e.FD != 7 {
			t.Errorf("%s: %+v lost the system's error, the PID or the fd", c.name, e)
		}
	}
}

func TestIsAncestor(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !isAncestor(os.Getpid(), cmd.Process.Pid) {
		t.Error("this process is not an ancestor of its child")
	}
	if isAncestor(cmd.Process.Pid, os.Getpid()) {
		t.Error("a child is an ancestor of its parent")
	}
	if !isAncestor(1, os.Getpid()) && os.Getpid() != 1 {
		t.Error("init is not an ancestor")
	}
}
