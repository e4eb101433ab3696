package child

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"nbdscope/internal/testbin"
	"nbdscope/probe/sockctl"
)

// liveBufsHelperEnv makes the test binary, re-executed as another user,
// try to change a process's buffers as a role would (trySetAs).
const liveBufsHelperEnv = "NBDSCOPE_LIVEBUFS_HELPER_PID"

func init() {
	if s := os.Getenv(liveBufsHelperEnv); s != "" {
		pid, _ := strconv.Atoi(s)
		l, _ := watchBufs(pid, [2]int{}, "the client")
		m, _ := l.set(sockctl.SendBuf, 1<<20, "the client")
		l.close()
		fmt.Printf("%s\t%s\n", m.Type, m.Err)
		os.Exit(0)
	}
}

// TestLiveBufsRefusalNamesReason: as nobody, changing the buffers of a
// root process (this one) is refused, and the reply names the reason and
// the fix, as a key press or --at then shows it; nothing is changed.
func TestLiveBufsRefusalNamesReason(t *testing.T) {
	bin := testbin.WorldExecutableCopy(t, "child")
	got := testbin.RunAsNobody(t, bin, nil, liveBufsHelperEnv, strconv.Itoa(os.Getpid()))
	for _, want := range []string{"error\t", "the client's buffers cannot be changed", "runs as uid 0", "fix: sudo "} {
		if !strings.Contains(got, want) {
			t.Errorf("as nobody, on root's process: %q lacks %q", got, want)
		}
	}
}

// TestLiveBufsFirstLookReadsBack: the look that finds a new data socket
// and applies the buffer asked for reports the value the socket has after
// that, not the one it had before (the process's own), so the first
// sample after a connect is not taken for a clamp.
func TestLiveBufsFirstLookReadsBack(t *testing.T) {
	dir := testbin.ShortDir(t)
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// 16k: under any default, so the value asked for differs from the
	// socket's own wherever the test runs (Linux reads back twice it).
	const req = 16 << 10
	l := watchedAndLooked(t, os.Getpid(), [2]int{sockctl.SendBuf: req}, "the server")
	want := sndbufOf(t, srv.(*net.UnixConn))
	if own := l.own[sockctl.SendBuf]; own == want {
		t.Fatalf("the socket's own send buffer %d is what was asked for: the test cannot tell them apart", own)
	}
	if l.snd != want {
		t.Errorf("after the first look the send buffer reported is %d, the socket has %d (own %d)", l.snd, want, l.own[sockctl.SendBuf])
	}
}

// watchedAndLooked follows pid's data sockets for whose (watchBufs, with
// the buffers asked for), closed when the test ends, after a first look
// that found one. The test is skipped where the process's buffers cannot
// be changed or sock_diag is missing.
func watchedAndLooked(t *testing.T, pid int, asked [2]int, whose string) *liveBufs {
	t.Helper()
	l, err := watchBufs(pid, asked, whose)
	if err != nil {
		t.Skipf("the buffers of process %d cannot be changed here: %v", pid, err)
	}
	t.Cleanup(l.close)
	if l.socks == nil {
		t.Skip("sock_diag is not available here")
	}
	if _, ok := l.look(); !ok {
		t.Fatalf("the look found no data socket of process %d", pid)
	}
	return l
}

// sndbufOf is a connection's SO_SNDBUF as getsockopt reads it.
func sndbufOf(t *testing.T, c *net.UnixConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// TestLiveBufsSetOnAnExitedProcess: a change that finds the followed
// process gone says so (gone), so that an exec side, whose client runs
// come and go, takes it for a change between two runs rather than a
// refusal (a scripted change that came as qemu-img exited failed the run's
// script with "process N has exited").
func TestLiveBufsSetOnAnExitedProcess(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3, for a process that holds a connected socket")
	}
	holder := exec.Command("python3", "-c", "import socket, sys, time; a, b = socket.socketpair(); print(flush=True); time.sleep(30)")
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	if _, err := out.Read(make([]byte, 1)); err != nil { // its sockets are made
		t.Fatal(err)
	}
	l := watchedAndLooked(t, holder.Process.Pid, [2]int{}, "the client")
	if m, gone := l.set(sockctl.SendBuf, 64<<10, "the client"); gone || m.Type == "error" || m.Reached < 1 {
		t.Fatalf("while it runs: %+v, gone %v", m, gone)
	}
	holder.Process.Kill()
	holder.Wait()
	m, gone := l.set(sockctl.SendBuf, 1<<20, "the client")
	if !gone || m.Type != "error" {
		t.Errorf("after it exited: %+v, gone %v; want gone", m, gone)
	}
}
