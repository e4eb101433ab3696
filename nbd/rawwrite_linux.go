package nbd

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// writeNoWait makes one write(2) of bufs (writev(2) for several) on a
// socket in Go's netpoller, which is non-blocking, so the call never
// waits: it copies what the send buffer takes and returns, or says
// EAGAIN. It is made raw, without the runtime's syscall entry, as the
// polled reader's calls are (readPolled): through the entry, sysmon takes
// the P from a call past 20 µs, and a 2 MiB payload copies for about a
// quarter of a millisecond; with the process on one core (GOMAXPROCS 1,
// no processor idle) the P goes to a second thread started to look for
// work, on that same core, while the copy runs. The pair's server at the
// default buffer made 0.50-0.52 involuntary switches per 2 MiB this way
// against 0.79-0.85 (bench/README, "The pair against the copy loop").
func (c *Conn) writeNoWait(fd uintptr, bufs [][]byte) (int, error) {
	if len(bufs) == 1 {
		p := bufs[0]
		r, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		return int(r), errnoErr(e)
	}
	iov := appendIovecs(c.wiov[:0], bufs)
	if len(iov) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	clear(iov) // hold no caller buffer after the call
	c.wiov = iov[:0]
	return int(r), errnoErr(e)
}

// appendIovecs appends an iovec for each non-empty buffer of bufs to dst:
// the vector of a writev or sendmsg made as a raw call.
func appendIovecs(dst []unix.Iovec, bufs [][]byte) []unix.Iovec {
	for _, b := range bufs {
		if len(b) > 0 {
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			dst = append(dst, v)
		}
	}
	return dst
}
