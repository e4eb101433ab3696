package e2e

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/nbd"
)

// startServe starts the built binary's `serve args…` (not the test
// binary: under the race detector its memory would be the detector's as
// much as the server's), waits (bounded) for its listening line, and
// kills it at the end of the test. It returns its PID and its stderr.
func startServe(t *testing.T, args ...string) (int, *testbin.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(nbdscopeBin, append([]string{"serve"}, args...)...)
	out := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(out.String(), "listening on"); {
		select {
		case <-exited:
			t.Fatalf("serve %v exited during start:\n%s", args, out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %v did not start within 15 s:\n%s", args, out)
		}
	}
	return cmd.Process.Pid, out
}

// vmRSS is a process's resident memory, in bytes, from /proc/PID/status.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/PID/status")
	return 0
}

// halfSentWrite connects to sock, negotiates, sends a WRITE header of 32
// MiB and 1000 bytes of its payload, and returns the connection; false
// when the server closed it before the greeting (over its connection
// limit).
func halfSentWrite(sock string) (net.Conn, bool, error) {
	c, ok, err := negotiate(sock)
	if !ok {
		return nil, false, err
	}
	var req [28]byte
	nbd.Request{Type: nbd.CmdWrite, Cookie: 1, Length: nbd.MaxPayload}.Put(req[:])
	if _, err := c.Write(append(req[:], make([]byte, 1000)...)); err != nil {
		c.Close()
		return nil, false, err
	}
	return c, true, nil
}

// negotiate connects to sock and negotiates (fixed newstyle, GO on the
// default export, simple replies); false when the server closed the
// connection before its greeting.
func negotiate(sock string) (net.Conn, bool, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, false, err
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	greeting := make([]byte, 18)
	if _, err := io.ReadFull(c, greeting); err != nil {
		c.Close()
		return nil, false, nil // refused: closed without a greeting
	}
	b := binary.BigEndian.AppendUint32(nil, 1|2)             // fixed newstyle, no zeroes
	b = binary.BigEndian.AppendUint64(b, 0x49484156454F5054) // IHAVEOPT
	b = binary.BigEndian.AppendUint32(b, nbd.OptGo)
	b = binary.BigEndian.AppendUint32(b, 6)
	b = append(b, 0, 0, 0, 0, 0, 0) // the empty name, no info requests
	if _, err := c.Write(b); err != nil {
		c.Close()
		return nil, false, err
	}
	for {
		h := make([]byte, 20)
		if _, err := io.ReadFull(c, h); err != nil {
			c.Close()
			return nil, false, err
		}
		if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(h[16:]))); err != nil {
			c.Close()
			return nil, false, err
		}
		if binary.BigEndian.Uint32(h[12:]) == nbd.RepAck {
			return c, true, nil
		}
	}
}

// TestServeMemoryReturnsAfterAbuse: 400 connections to `serve` (its limit
// 256), each sending a 32 MiB WRITE header and 1000 bytes of payload,
// then closing, leave the server's resident memory within 16 MiB of what
// it was idle (issue 33: 9 MiB idle, 538 MiB after they closed, for good:
// a pooled 32 MiB buffer per half-sent WRITE, a huge page of each
// touched). The 144 connections over the limit are refused, said on
// stderr without -v, and counted by --stats.
func TestServeMemoryReturnsAfterAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("400 connections to a serve process")
	}
	dir := testbin.ShortDir(t)
	sock := filepath.Join(dir, "s.sock")
	pid, serveOut := startServe(t, "-k", sock, "--backend", "memory", "--size", "1g", "--stats=200ms")
	idle := vmRSS(t, pid)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	refused := 0
	for range 400 {
		c, ok, err := halfSentWrite(sock)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			refused++
			continue
		}
		conns = append(conns, c)
	}
	if len(conns) != nbd.DefaultMaxConns || refused != 400-nbd.DefaultMaxConns {
		t.Fatalf("%d connections served, %d refused; want %d and %d", len(conns), refused, nbd.DefaultMaxConns, 400-nbd.DefaultMaxConns)
	}
	time.Sleep(300 * time.Millisecond) // the server reads the headers and the bytes sent
	busy := vmRSS(t, pid)
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	after := rssSettled(t, pid, idle)
	t.Logf("VmRSS idle %d MiB, with the half-sent WRITEs %d MiB, after they closed %d MiB", idle>>20, busy>>20, after>>20)
	if after > idle+16<<20 {
		t.Errorf("VmRSS %d MiB 10 s after the connections closed, idle %d MiB: want within 16 MiB", after>>20, idle>>20)
	}
	wants := []string{"refusing connection: limit of 256 connections reached", "more connections in the last", "refused=144"}
	has := func() bool {
		out := serveOut.String()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !has() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	out := serveOut.String()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("serve's stderr lacks %q", want)
		}
	}
}

// TestServeMemoryReturnsAfterReads: 4 connections that each read 4 × 8
// MiB from the memory backend, then close, leave the server's resident
// memory within 16 MiB of what it was idle: the READs' buffers are the
// connections' and go with them (they stayed in the process's pools: 8
// connections reading 4 × 32 MiB each left 1037 MiB resident, 9 idle).
func TestServeMemoryReturnsAfterReads(t *testing.T) {
	sock := filepath.Join(testbin.ShortDir(t), "s.sock")
	pid, _ := startServe(t, "-k", sock, "--backend", "memory", "--size", "64m")
	idle := vmRSS(t, pid)
	const conns, reads, size = 4, 4, 8 << 20
	var cs []net.Conn
	for range conns {
		c, ok, err := negotiate(sock)
		if !ok {
			t.Fatalf("connecting: %v", err)
		}
		defer c.Close()
		cs = append(cs, c)
		var b []byte
		for k := range reads {
			var req [28]byte
			nbd.Request{Type: nbd.CmdRead, Cookie: uint64(k), Offset: uint64(k * size), Length: size}.Put(req[:])
			b = append(b, req[:]...)
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cs {
		// Each reply: a 16-byte simple reply header and its data.
		if _, err := io.CopyN(io.Discard, c, reads*(16+size)); err != nil {
			t.Fatalf("reading the replies: %v", err)
		}
	}
	busy := vmRSS(t, pid)
	for _, c := range cs {
		c.Close()
	}
	after := rssSettled(t, pid, idle)
	t.Logf("VmRSS idle %d MiB, after the reads %d MiB, after the connections closed %d MiB", idle>>20, busy>>20, after>>20)
	if after > idle+16<<20 {
		t.Errorf("VmRSS %d MiB 10 s after the connections closed, idle %d MiB: want within 16 MiB", after>>20, idle>>20)
	}
}

// rssSettled is pid's VmRSS once it is back within 16 MiB of idle, or
// after 10 s (bounded: the memory is back at once, or within a few
// seconds).
func rssSettled(t *testing.T, pid int, idle int64) int64 {
	t.Helper()
	var after int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		after = vmRSS(t, pid)
		if after <= idle+16<<20 || time.Now().After(deadline) {
			return after
		}
		time.Sleep(100 * time.Millisecond)
	}
}
