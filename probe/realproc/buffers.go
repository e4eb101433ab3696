package realproc

import (
	"errors"
	"fmt"

	"nbdscope/probe/sockctl"
	"nbdscope/probe/sockdiag"
)

// Buffers changes a real process's socket buffers from outside
// (probe/sockctl: pidfd_getfd + setsockopt on its own sockets) and
// keeps a request applied to every connection it opens later.
//
// The value each socket had when first seen is the process's own (qemu-nbd
// 10.1+ sets 2 MiB itself): asking for 0 restores it, socket by socket.
//
// The sockets may be held by the process or by processes it started (a
// shell running the real client): each is changed through its holder,
// taken hold of when its first socket is seen and let go when it has none
// left. Not safe for concurrent use.
type Buffers struct {
	proc    *sockctl.Process
	openErr error
	want    [2]int                 // per option: the setsockopt request; 0 = the process's own
	own     map[sockdiag.Inode]own // first seen, per socket
	// others are the processes below proc holding tracked sockets.
	others map[int]*sockctl.Process
}

type own struct {
	proc *sockctl.Process // its holder
	fd   int
	buf  [2]int // SO_SNDBUF, SO_RCVBUF as getsockopt read them when first seen
}

// ControlBuffers takes hold of process pid's sockets. A refusal (another
// user, Yama, an old kernel, macOS) is not an error here: Set returns it,
// so the key or --at that asks is refused with the reason.
func ControlBuffers(pid int) *Buffers {
	b := &Buffers{own: map[sockdiag.Inode]own{}, others: map[int]*sockctl.Process{}}
	b.proc, b.openErr = sockctl.Open(pid)
	return b
}

// holder is the process to change a socket held by pid through: the
// process itself, or one it started, taken hold of on first use (nil when
// that is refused: its sockets are left as they are).
func (b *Buffers) holder(pid int) *sockctl.Process {
	if pid == b.proc.PID() {
		return b.proc
	}
	if p, ok := b.others[pid]; ok {
		return p
	}
	p, err := sockctl.Open(pid)
	if err != nil {
		p = nil
	}
	b.others[pid] = p
	return p
}

// forget lets go of the processes below proc that hold no tracked socket.
func (b *Buffers) forget() {
	held := map[*sockctl.Process]bool{}
	for _, o := range b.own {
		held[o.proc] = true
	}
	for pid, p := range b.others {
		if !held[p] {
			if p != nil {
				p.Close()
			}
			delete(b.others, pid)
		}
	}
}

// Err is why the buffers cannot be changed; nil when they can.
func (b *Buffers) Err() error { return b.openErr }

// Track notes the data sockets of a scan: each new one's own buffers, and
// the requests in force applied to it. It returns how many new sockets it
// changed. Sockets gone are forgotten.
func (b *Buffers) Track(data []sockdiag.Socket) (changed int) {
	if b.proc == nil {
		return 0
	}
	seen := map[sockdiag.Inode]bool{}
	for _, k := range data {
		seen[k.Inode] = true
		if _, ok := b.own[k.Inode]; ok || len(k.Holders) == 0 {
			continue
		}
		if b.track(k.Inode, k.Holders[0]) {
			changed++
		}
	}
	for ino := range b.own {
		if !seen[ino] {
			delete(b.own, ino)
		}
	}
	b.forget()
	return changed
}

// track notes a new socket's own buffers, through its holder h, and
// applies the requests in force: true when one was applied.
func (b *Buffers) track(ino sockdiag.Inode, h sockdiag.FD) bool {
	p := b.holder(h.PID)
	if p == nil {
		return false
	}
	o := own{proc: p, fd: h.FD}
	var err error
	if o.buf[0], err = p.Get(h.FD, sockctl.SendBuf); err != nil {
		return false // closed meanwhile
	}
	o.buf[1], _ = p.Get(h.FD, sockctl.RecvBuf)
	b.own[ino] = o
	did := false
	for opt, req := range b.want {
		if req > 0 {
			if _, err := p.Set(h.FD, sockctl.Option(opt), req); err == nil {
				did = true
			}
		}
	}
	return did
}

// Set asks for req bytes of buffer o (0: each socket's own value back) on
// every data socket tracked, and on every later one. It returns how many
// sockets it reached and the effective value read back from the first.
func (b *Buffers) Set(o sockctl.Option, req int) (reached, effective int, err error) {
	if b.proc == nil {
		return 0, 0, b.openErr
	}
	b.want[o] = req
	var errs []error
	for ino, s := range b.own {
		ask := req
		if ask == 0 {
			ask = s.buf[o] / 2 // getsockopt reads twice the request back (socket(7))
		}
		if ask <= 0 {
			continue
		}
		eff, err := s.proc.Set(s.fd, o, ask)
		if err != nil {
			var se *sockctl.Error
			if errors.As(err, &se) && (se.Reason == sockctl.ReasonNoFD || se.Reason == sockctl.ReasonNotSocket) {
				delete(b.own, ino) // closed since the scan
				continue
			}
			errs = append(errs, err)
			continue
		}
		if reached == 0 {
			effective = eff
		}
		reached++
	}
	if reached == 0 && len(errs) > 0 {
		return 0, 0, errs[0]
	}
	return reached, effective, nil
}

// Own is a socket's own buffer o as first seen, from any tracked socket
// (0 when none is tracked yet).
func (b *Buffers) Own(o sockctl.Option) int {
	for _, s := range b.own {
		return s.buf[o]
	}
	return 0
}

// Close releases the process.
func (b *Buffers) Close() {
	if b.proc != nil {
		b.proc.Close()
	}
	for _, p := range b.others {
		if p != nil {
			p.Close()
		}
	}
	clear(b.others)
}

// Refusal is a refused change in a sentence with the fix.
func Refusal(err error) string {
	var se *sockctl.Error
	if errors.As(err, &se) {
		s := se.Why
		if se.Fix != "" {
			s += fmt.Sprintf(" (fix: %s)", se.Fix)
		}
		return s
	}
	return err.Error()
}
