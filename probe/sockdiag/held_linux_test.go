package sockdiag

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHeldAgreesWithNetlink: a socket read through its holder gives the
// SK_MEMINFO netlink gives, at a fill that does not move (nobody reads).
func TestHeldAgreesWithNetlink(t *testing.T) {
	p := linuxProbe(t) // what a sampler reads through: netlink and pidfds
	defer p.Close()
	for _, h := range heldOfEachKind(t) {
		held, _, err := p.heldMem(h)
		if err != nil {
			t.Fatalf("%v: %v", h, err)
		}
		ss, err := p.Describe([]FD{h})
		if err != nil || len(ss) != 1 {
			t.Fatalf("%v: netlink %v, %v", h, ss, err)
		}
		mem := ss[0].Unix.Mem
		if ss[0].Kind == KindTCP {
			mem = ss[0].TCP.Mem
		}
		mem.Drops, held.Drops = 0, 0
		if held != mem {
			t.Errorf("%v (%v): through the holder %+v, by netlink %+v", h, ss[0].Kind, held, mem)
		}
	}
}

// heldOfEachKind is a socket of each kind this process holds, as their
// holders: a socketpair's end with its send buffer full, a listener's
// accepted socket with 64 KiB queued, and a TCP connection's server end.
func heldOfEachKind(t *testing.T) []FD {
	p := newSocketPair(t)
	fillNonblocking(t, p.fd[0])
	acc := unixAccepted(t)
	if _, err := unix.Write(acc.fd, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	_, server := tcpPair(t, "tcp4", "127.0.0.1:0")
	tcpFile, err := server.File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcpFile.Close() })
	return []FD{p.holder(0, true), {PID: os.Getpid(), FD: acc.fd, Inode: acc.ino},
		{PID: os.Getpid(), FD: int(tcpFile.Fd()), Inode: tcpInode(t, server)}}
}

// TestHeldSocketClosesWithItsOwner: the sampler reads a socket through a
// duplicate it closes at once, so when the owner closes the socket its
// peer sees the end of the stream, however long the sampling goes on.
func TestHeldSocketClosesWithItsOwner(t *testing.T) {
	p := newSocketPair(t)
	s := startSampler(t, ModeAuto)
	s.SetHeld("A", []FD{p.holder(0, true)})
	collect(t, s, "A", samplesAtLeast(50))
	p.close(0)
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(p.fd[1], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	n, err := unix.Read(p.fd[1], make([]byte, 1))
	if n != 0 || err != nil {
		t.Fatalf("the peer read %d, %v after its sender closed (EAGAIN: the sampler keeps the socket open)", n, err)
	}
}

// TestHeldMoved: a closed descriptor, one whose number now holds another
// socket, and an exited process are told apart from a refusal.
func TestHeldMoved(t *testing.T) {
	r := newPidfdReader()
	defer r.Close()
	a, b := newSocketPair(t), newSocketPair(t)
	if _, err := r.heldMem(FD{PID: os.Getpid(), FD: a.fd[0], Inode: b.ino[0]}); !errors.Is(err, errHeldMoved) {
		t.Errorf("another socket under the number: %v", err)
	}
	fd := a.fd[0]
	a.close(0)
	if _, err := r.heldMem(FD{PID: os.Getpid(), FD: fd, Inode: a.ino[0]}); !errors.Is(err, errHeldMoved) {
		t.Errorf("a closed descriptor: %v", err)
	}
	if _, err := r.heldMem(FD{PID: 1 << 30, FD: 3, Inode: a.ino[0]}); !errors.Is(err, errHeldMoved) {
		t.Errorf("no such process: %v", err)
	}
}
