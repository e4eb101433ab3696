package syscount

import (
	"errors"
	"os"
	"testing"
)

// TestSocketsMatchTheProcessOwnCount counts a process's socket calls at
// the socket layer (Options.Sockets) while its threads come and go, and
// compares each direction with what it counted itself on its socketpairs,
// every call among the ten, recvmmsg and sendmmsg (counted once each
// though they move several messages) and EAGAIN included. Its other
// calls, an empty pipe's reads and /dev/null's writes each round, are not
// socket calls and must not count.
func TestSocketsMatchTheProcessOwnCount(t *testing.T) {
	needCounting(t)
	needBPF(t)
	h := startHelper(t, 4, 300)
	c := mustOpen(t, h.pid, Options{Sockets: true, Mechanism: PerProcess})
	byPair := h.run(t)
	var want selfCount
	for _, p := range byPair {
		want.add(p)
	}
	got := mustRead(t, c)
	for _, d := range []Dir{Recv, Send} {
		var calls, eagain uint64
		for s := range NumSyscalls {
			if s.Dir() == d {
				calls, eagain = calls+want.Calls[s], eagain+want.EAGAIN[s]
			}
		}
		e := got.EAGAIN(d)
		t.Logf("%s: counted %d calls, %v EAGAIN; the process made %d, %d EAGAIN", d, got.Calls(d), e, calls, eagain)
		if got.Calls(d) != calls || !e.Exact() || e.Min != eagain {
			t.Errorf("%s: counted %d calls, %v EAGAIN at the socket layer; the process made %d on its sockets, %d EAGAIN", d, got.Calls(d), e, calls, eagain)
		}
	}
	for s := range NumSyscalls {
		if got.Of[s] != (Count{}) {
			t.Errorf("%s counted per call (%+v) by a socket-layer counter", s, got.Of[s])
		}
	}
	h.exit(t)
}

// TestSocketsNeedBPF: there is no per-thread way to count at the socket
// layer; Open says so rather than count something else.
func TestSocketsNeedBPF(t *testing.T) {
	needCounting(t)
	_, err := Open(os.Getpid(), Options{Sockets: true, Mechanism: PerThread})
	if err == nil || errors.As(err, new(*Unavailable)) {
		t.Fatalf("Open(Sockets, PerThread) = %v, want an error that it is per process only", err)
	}
}

// TestSocketsCountChildren: at the socket layer too, with Options.Children
// a process the target starts after Open is counted from its first
// instruction (its writes to a socket of its own), and without it only the
// target's are.
func TestSocketsCountChildren(t *testing.T) {
	needCounting(t)
	needBPF(t)
	for _, children := range []bool{true, false} {
		var c *Counter
		forkAndCount(t, func(pid int) {
			c = mustOpen(t, pid, Options{Sockets: true, Children: children, Mechanism: PerProcess})
		}, "HELPER_SOCKETS=1")
		got := mustRead(t, c)
		want := uint64(parentWrites)
		if children {
			want += childWrites
		}
		if got.Calls(Send) != want || got.Calls(Recv) != 0 {
			t.Errorf("children %v: %d send calls (%v EAGAIN), %d receive, want %d sends", children, got.Calls(Send), got.EAGAIN(Send), got.Calls(Recv), want)
		}
		c.Close()
	}
}
