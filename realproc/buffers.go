package realproc

import (
	"errors"
	"fmt"

	"nbdscope/platform/sockctl"
	"nbdscope/platform/sockdiag"
)

// Buffers changes a real process's socket buffers from outside
// (platform/sockctl: pidfd_getfd + setsockopt on its own sockets) and
// keeps a request applied to every connection it opens later.
//
// The value each socket had when first seen is the process's own (qemu-nbd
// 10.1+ sets 2 MiB itself): asking for 0 restores it, socket by socket.
// Not safe for concurrent use.
type Buffers struct {
	proc    *sockctl.Process
	openErr error
	want    [2]int                 // per option: the setsockopt request; 0 = the process's own
	own     map[sockdiag.Inode]own // first seen, per socket
}

type own struct {
	fd  int
	buf [2]int // SO_SNDBUF, SO_RCVBUF as getsockopt read them when first seen
}

// ControlBuffers takes hold of process pid's sockets. A refusal (another
// user, Yama, an old kernel, macOS) is not an error here: Set returns it,
// so the key or --at that asks is refused with the reason.
func ControlBuffers(pid int) *Buffers {
	b := &Buffers{own: map[sockdiag.Inode]own{}}
	b.proc, b.openErr = sockctl.Open(pid)
	return b
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
		if _, ok := b.own[k.Inode]; ok || len(k.Holders) == 0 || k.Holders[0].PID != b.proc.PID() {
			continue
		}
		fd := k.Holders[0].FD
		var o own
		o.fd = fd
		var err error
		if o.buf[0], err = b.proc.Get(fd, sockctl.SendBuf); err != nil {
			continue // closed meanwhile
		}
		o.buf[1], _ = b.proc.Get(fd, sockctl.RecvBuf)
		b.own[k.Inode] = o
		did := false
		for opt, req := range b.want {
			if req > 0 {
				if _, err := b.proc.Set(fd, sockctl.Option(opt), req); err == nil {
					did = true
				}
			}
		}
		if did {
			changed++
		}
	}
	for ino := range b.own {
		if !seen[ino] {
			delete(b.own, ino)
		}
	}
	return changed
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
		eff, err := b.proc.Set(s.fd, o, ask)
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
