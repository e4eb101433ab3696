package sockdiag

import (
	"errors"
	"fmt"
)

// The held path (Sampler.SetHeld): a sender whose holder is known is read
// through a duplicate of the holder's descriptor instead of a netlink
// lookup. The duplicate lives for the one getsockopt: a duplicate kept
// open would keep the socket open after its process closed it, and its
// peer would wait for an end of file that does not come.

// errHeldMoved says the descriptor no longer holds the socket: the
// process closed it (and may have opened another under the same number),
// or has exited. Netlink then says whether the socket still exists.
var errHeldMoved = errors.New("the descriptor no longer holds the socket")

// heldRefusal says a process's descriptors cannot be duplicated: another
// user's process, a Yama ptrace scope, a kernel before 5.6 (pidfd_getfd)
// or before 4.12 (SO_MEMINFO).
type heldRefusal struct {
	PID int
	Err error
}

func (e *heldRefusal) Error() string {
	return fmt.Sprintf("PID %d's sockets cannot be read through its descriptors: %v", e.PID, e.Err)
}

func (e *heldRefusal) Unwrap() error { return e.Err }

// holderFor is the holder the loop reads a socket through: none for a
// socket without one or of a process that refused.
func (l *loopState) holderFor(fd FD) FD {
	if fd.PID <= 0 || l.refused[fd.PID] {
		return FD{}
	}
	return fd
}

// observeHeld samples every socket that has a holder through it. A socket
// whose holder refused or moved loses it and is sampled by netlink in the
// same tick. Where the reader tells the kind (XNU), a socket not yet
// resolved is resolved by it; on Linux the listing resolves it first.
func (l *loopState) observeHeld() {
	for _, t := range l.order {
		if t.gone || t.holder.PID == 0 {
			continue
		}
		mem, kind, err := l.p.heldMem(t.holder)
		if err == nil {
			if t.kind == 0 {
				t.kind = kind
			}
			if t.kind != 0 {
				t.takeHeld(mem)
			}
			continue
		}
		if refusal := (*heldRefusal)(nil); errors.As(err, &refusal) {
			l.refuse(refusal)
			continue
		}
		t.holder = FD{}
	}
}

// refuse stops reading a process's sockets through its descriptors: each
// would be refused again. The refusal stays with each socket, to say why
// it is gone where no other reader finds it (XNU).
func (l *loopState) refuse(r *heldRefusal) {
	l.refused[r.PID] = true
	for _, t := range l.order {
		if t.holder.PID == r.PID {
			t.holder, t.refusal = FD{}, r
		}
	}
}

// takeHeld is the sample of a socket's SK_MEMINFO read through its
// holder: the same figures takeUnix and takeTCP take from netlink. The
// receiver is not read (its queue is not one of the fill figures).
func (t *tracked) takeHeld(m MemInfo) {
	inFlight := m.WmemAlloc
	if t.kind == KindTCP {
		inFlight = m.WmemQueued
	}
	t.sample = sample{InFlight: int64(inFlight), Limit: int64(m.Sndbuf)}
	t.ok = true
}
