//go:build linux

package sockdiag

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// socketPair is a connected AF_UNIX stream pair the test holds.
type socketPair struct {
	fd   [2]int
	ino  [2]Inode
	open [2]bool
}

func newSocketPair(t testing.TB) *socketPair {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	p := &socketPair{fd: [2]int{fds[0], fds[1]}, open: [2]bool{true, true}}
	for i, fd := range fds {
		p.ino[i] = fdInode(t, fd)
	}
	t.Cleanup(func() { p.closeBoth() })
	return p
}

func (p *socketPair) close(i int) {
	if p.open[i] {
		unix.Close(p.fd[i])
		p.open[i] = false
	}
}

func (p *socketPair) closeBoth() { p.close(0); p.close(1) }

func fdInode(t testing.TB, fd int) Inode {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatalf("fstat %d: %v", fd, err)
	}
	return Inode(st.Ino)
}

// fillNonblocking writes into fd until the kernel refuses more (EAGAIN),
// and returns the payload bytes it took. The loop is bounded: a send
// buffer cannot hold more than a few MiB.
func fillNonblocking(t testing.TB, fd int) int {
	t.Helper()
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	defer unix.SetNonblock(fd, false)
	chunk := make([]byte, 4096)
	total := 0
	for range 1 << 16 {
		n, err := unix.Write(fd, chunk)
		if err == unix.EAGAIN {
			return total
		}
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		total += n
	}
	t.Fatalf("wrote %d bytes and the socket still takes more", total)
	return total
}

// linuxProbe is what StartSampler reads through, for a sampler a test
// ticks itself.
func linuxProbe(t testing.TB) samplerProbe {
	return samplerProbe{Conn: dial(t), held: newPidfdReader()}
}

// holder is end i of the pair as this process holds it, for SetHeld; with
// held false, a sender without a holder.
func (p *socketPair) holder(i int, held bool) FD {
	if !held {
		return FD{Inode: p.ino[i]}
	}
	return FD{PID: os.Getpid(), FD: p.fd[i], Inode: p.ino[i]}
}

func dial(t testing.TB) *Conn {
	t.Helper()
	c, err := Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// smallTCPPair is a tcp4 loopback pair (tcpPair) whose server sends
// through a 64 KiB buffer and whose client receives into one, so that a
// client that does not read soon leaves both full.
func smallTCPPair(t testing.TB) (client, server *net.TCPConn) {
	t.Helper()
	client, server = tcpPair(t, "tcp4", "127.0.0.1:0")
	if err := server.SetWriteBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	if err := client.SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	return client, server
}

// tcpPair is a loopback TCP connection: client and the server's end.
func tcpPair(t testing.TB, network, addr string) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s loopback here: %v", network, err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	c, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func tcpInode(t testing.TB, c *net.TCPConn) Inode {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ino Inode
	if err := rc.Control(func(fd uintptr) { ino = fdInode(t, int(fd)) }); err != nil {
		t.Fatal(err)
	}
	return ino
}

func tcpFD(t testing.TB, c *net.TCPConn) *os.File {
	t.Helper()
	f, err := c.File() // a dup: same socket, blocking mode
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
