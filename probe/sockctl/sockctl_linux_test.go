package sockctl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// The test binary re-executes itself as the other process, selected by
// this variable: "hold" holds a unix socket (holdHelper), "tryset" tries
// to change another process's buffer (trySetHelper).
const helperEnv = "NBDSCOPE_SOCKCTL_HELPER"

func TestMain(m *testing.M) {
	testbin.Roles(m, helperEnv, map[string]func() int{"hold": holdHelper, "tryset": trySetHelper})
}

// holdHelper makes a socketpair, prints "PID FD" (one end), and answers
// each "get" line on stdin with that socket's own SO_SNDBUF and
// SO_RCVBUF, until stdin closes.
func holdHelper() int {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(os.Getpid(), pair[0])
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		snd, err1 := unix.GetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF)
		rcv, err2 := unix.GetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_RCVBUF)
		if err := errors.Join(err1, err2); err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println(snd, rcv)
	}
	return 0
}

// trySetHelper opens HELPER_TARGET and sets SO_SNDBUF of its HELPER_FD,
// and prints the reason each step gives ("ok" when none).
func trySetHelper() int {
	pid, _ := strconv.Atoi(os.Getenv("HELPER_TARGET"))
	fd, _ := strconv.Atoi(os.Getenv("HELPER_FD"))
	p, err := Open(pid)
	fmt.Println(reasonOf(err))
	if err != nil {
		return 0
	}
	defer p.Close()
	_, err = p.Set(fd, SendBuf, 1<<20)
	fmt.Println(reasonOf(err))
	return 0
}

// reasonOf is the line a helper prints of err for the test to parse.
func reasonOf(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason.String() + "\t" + e.Error()
	}
	return "error\t" + err.Error()
}

// holder is a running holdHelper.
type holder struct {
	*testbin.Helper
	pid int
	fd  int
}

// startHolder starts holdHelper from bin (the test binary, or a copy),
// with attr (another user's credentials) if not nil; it is killed at the
// end of the test.
func startHolder(t *testing.T, bin string, attr *syscall.SysProcAttr) *holder {
	t.Helper()
	cmd := testbin.HelperCommand(bin, helperEnv, "hold")
	cmd.SysProcAttr = attr
	h := &holder{Helper: testbin.StartHelper(t, cmd)}
	if _, err := fmt.Sscan(h.Line(t), &h.pid, &h.fd); err != nil {
		t.Fatal(err)
	}
	return h
}

// own is the holder's own getsockopt of its socket.
func (h *holder) own(t *testing.T) (snd, rcv int) {
	t.Helper()
	io.WriteString(h.Stdin, "get\n")
	if _, err := fmt.Sscan(h.Line(t), &snd, &rcv); err != nil {
		t.Fatal(err)
	}
	return snd, rcv
}

// independentGet reads a buffer of a process's fd through a pidfd and a
// duplicate of its own, not through this package.
func independentGet(t *testing.T, pid, fd, opt int) int {
	t.Helper()
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	dup, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	v, err := unix.GetsockoptInt(dup, unix.SOL_SOCKET, opt)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// linuxEffective is what Linux makes of a request: doubled, after clamping
// to the sysctl's maximum.
func linuxEffective(t *testing.T, request int, sysctl string) int {
	b, err := os.ReadFile("/proc/sys/net/core/" + sysctl)
	if err != nil {
		t.Fatal(err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return 2 * min(request, limit)
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestSetSendBufferOfAnotherProcess changes a running child's SO_SNDBUF
// to 2 MiB and SO_RCVBUF to 1 MiB, checks the value Set returns against
// an independent duplicate and against the child's own getsockopt, then
// puts the child's own value back. No duplicate stays open.
func TestSetSendBufferOfAnotherProcess(t *testing.T) {
	h := startHolder(t, os.Args[0], nil)
	fds := openFDs(t)
	p := openHolder(t, h)
	if p.PID() != h.pid {
		t.Errorf("PID() = %d, want %d", p.PID(), h.pid)
	}
	ownSnd, _ := h.own(t)
	before, err := p.Get(h.fd, SendBuf)
	if err != nil || before != ownSnd {
		t.Fatalf("Get = %d, %v; the child's own SO_SNDBUF is %d", before, err, ownSnd)
	}
	eff, err := p.Set(h.fd, SendBuf, 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := linuxEffective(t, 2<<20, "wmem_max"); eff != want {
		t.Errorf("Set SO_SNDBUF 2 MiB: effective %d, want %d", eff, want)
	}
	if got := independentGet(t, h.pid, h.fd, unix.SO_SNDBUF); got != eff {
		t.Errorf("an independent duplicate reads SO_SNDBUF %d, Set said %d", got, eff)
	}
	effR, err := p.Set(h.fd, RecvBuf, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := linuxEffective(t, 1<<20, "rmem_max"); effR != want {
		t.Errorf("Set SO_RCVBUF 1 MiB: effective %d, want %d", effR, want)
	}
	t.Logf("process %d fd %d: SO_SNDBUF %d -> %d (asked 2 MiB), SO_RCVBUF -> %d (asked 1 MiB)", h.pid, h.fd, before, eff, effR)
	if snd, rcv := h.own(t); snd != eff || rcv != effR {
		t.Errorf("the child reads its own socket as %d/%d, Set said %d/%d", snd, rcv, eff, effR)
	}
	// The child's own value back: Linux doubles what it is asked for.
	if back, err := p.Set(h.fd, SendBuf, before/2); err != nil || back != before {
		t.Errorf("restoring %d: %d, %v", before, back, err)
	}
	if snd, _ := h.own(t); snd != before {
		t.Errorf("after restoring, the child reads %d, want %d", snd, before)
	}
	if n := openFDs(t); n != fds+1 { // +1: the pidfd, until Close
		t.Errorf("%d fds open, %d before Open: a duplicate was left open", n, fds)
	}
	p.Close()
	if n := openFDs(t); n != fds {
		t.Errorf("%d fds open after Close, %d before Open", n, fds)
	}
	if _, err := p.Get(h.fd, SendBuf); err == nil {
		t.Error("Get after Close worked")
	}
}

// openHolder opens the holder's process, closed when the test ends.
func openHolder(t *testing.T, h *holder) *Process {
	t.Helper()
	p, err := Open(h.pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func wantReason(t *testing.T, what string, err error, r Reason) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Reason != r {
		t.Errorf("%s: %v, want %v", what, err, r)
	}
}

// TestNotASocketNoFDBadSize: the child's stdin is a pipe, fd 100000 does
// not exist, and a size must be positive.
func TestNotASocketNoFDBadSize(t *testing.T) {
	h := startHolder(t, os.Args[0], nil)
	p := openHolder(t, h)
	_, err := p.Set(0, SendBuf, 1<<20)
	wantReason(t, "fd 0 (a pipe)", err, ReasonNotSocket)
	_, err = p.Get(100000, SendBuf)
	wantReason(t, "fd 100000", err, ReasonNoFD)
	if _, err := p.Set(h.fd, SendBuf, 0); err == nil {
		t.Error("Set took size 0")
	}
	if _, err := p.Get(-1, SendBuf); err == nil {
		t.Error("Get took fd -1")
	}
	if _, err := Open(0); err == nil {
		t.Error("Open took pid 0")
	}
}

// TestProcessGone: a process that exits while held, and one already
// gone, give ReasonGone.
func TestProcessGone(t *testing.T) {
	h := startHolder(t, os.Args[0], nil)
	p := openHolder(t, h)
	h.Cmd.Process.Kill()
	h.Cmd.Wait()
	_, err := p.Set(h.fd, SendBuf, 1<<20)
	wantReason(t, "Set after the process exited", err, ReasonGone)
	_, err = Open(h.pid)
	wantReason(t, "Open after the process exited", err, ReasonGone)
}
