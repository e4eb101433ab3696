package nbd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// Helpers shared by the hostile-peer, fuzz and integrity tests: resource
// snapshots for leak checks, socket pairs, and a listener fed by hand.

// resources is what a leak check compares: goroutines of this process and
// its open file descriptors (-1 where /proc/self/fd does not exist).
type resources struct {
	goroutines int
	fds        int
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func snapshot() resources {
	return resources{goroutines: runtime.NumGoroutine(), fds: openFDs()}
}

// settleTimeout is how long a leak check waits for goroutines and file
// descriptors to come back down: connection goroutines end asynchronously.
const settleTimeout = 15 * time.Second // patient: a leak never settles, a busy -race machine only settles late

// expectNoLeak polls until the goroutines and fds are back at or below base
// and cond (if any) holds, and fails the test with a goroutine dump if they
// do not settle within settleTimeout.
func expectNoLeak(t testing.TB, base resources, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(settleTimeout)
	var cur resources
	for {
		cur = snapshot()
		ok := cur.goroutines <= base.goroutines && (base.fds < 0 || cur.fds <= base.fds)
		if ok && (cond == nil || cond()) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	buf := make([]byte, 256<<10)
	buf = buf[:runtime.Stack(buf, true)]
	t.Errorf("%s: not back to the starting level after %v: goroutines %d → %d, fds %d → %d (%s)\n%s",
		what, settleTimeout, base.goroutines, cur.goroutines, base.fds, cur.fds, fdList(), buf)
}

func fdList() string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return "no /proc/self/fd"
	}
	var l []string
	for _, e := range ents {
		if s, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			l = append(l, e.Name()+"→"+s)
		}
	}
	return strings.Join(l, " ")
}

// socketPair returns the two ends of a connected unix stream socket pair
// (unix.Socketpair → os.NewFile → net.FileConn), both *net.UnixConn.
func socketPair(t testing.TB) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	conv := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f) // dups the fd
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		return c.(*net.UnixConn)
	}
	return conv(fds[0]), conv(fds[1])
}

// connListener is a net.Listener that hands out connections given to it
// with add, so a real Server can serve one end of a socket pair.
type connListener struct {
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener() *connListener {
	return &connListener{ch: make(chan net.Conn, 4), closed: make(chan struct{})}
}

func (l *connListener) add(c net.Conn) { l.ch <- c }

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.UnixAddr{Name: "socketpair", Net: "unix"} }

// startCustomServer serves srv on a fresh unix socket until the test ends
// (startServer with a Server the caller configured).
func startCustomServer(t testing.TB, srv *Server) *testServer {
	t.Helper()
	sock := filepath.Join(testbin.ShortDir(t), "s.sock")
	ln, err := ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("server did not stop within 5s")
		}
		if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket %s left behind", sock)
		}
	})
	return &testServer{srv: srv, sock: sock, uri: URI{Transport: "unix", Socket: sock}}
}

// waitTimeout waits for op with a bound: a hung Wait fails the test instead
// of the whole suite.
func waitTimeout(t testing.TB, op *Op, d time.Duration) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- op.Wait() }()
	return within(t, ch, d, fmt.Sprintf("op.Wait (%s at %d) returning", CmdName(op.Cmd), op.Offset))
}

// within is what ch brings within d (an error, mostly); when nothing comes,
// the test fails saying what did not happen in time.
func within[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
		var zero T
		return zero
	}
}

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
