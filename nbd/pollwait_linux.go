package nbd

import (
	"io"
	"net"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PollReaderSupported reports whether ReaderPoll is built on this system.
const PollReaderSupported = true

// pollWaitLimit bounds one ppoll(2), so a reader whose socket is closed
// under it without the shutdown (which wakes it at once) still notices.
const pollWaitLimit = 500_000_000 // ns

// usePollWait moves the connection out of Go's netpoller: the socket is
// duplicated, Go's descriptor closed (which removes it from the runtime's
// epoll set before closing it, so no runtime thread is woken by its
// readiness), and the duplicate made blocking, so that os.File does not
// register it again. Each call then says MSG_DONTWAIT itself, counts its
// EAGAIN as before and waits in ppoll(2) on the calling thread.
func (c *Conn) usePollWait() error {
	var dfd int
	var derr error
	if err := c.raw.Control(func(fd uintptr) { dfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return err
	}
	if derr != nil {
		return os.NewSyscallError("fcntl", derr)
	}
	c.nc.Close()
	if err := unix.SetNonblock(dfd, false); err != nil {
		unix.Close(dfd)
		return os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(dfd), "nbd socket")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return err
	}
	c.file, c.raw, c.polled, c.pfd = f, raw, true, dfd
	c.rfn, c.wfn, c.tfn = c.readPolled, c.writePolled, c.tryWritePolled
	return nil
}

// closePolled wakes a reader or writer asleep in ppoll (shutdown makes the
// socket readable and writable: EOF and EPIPE) and drops the descriptor,
// which the OS closes once the last call on it has returned.
func (c *Conn) closePolled() error {
	c.closing.Store(true)
	c.raw.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
	return c.file.Close()
}

// waitPolled sleeps in ppoll(2) until fd has events (or hangs up), as
// qemu's event loop does for a coroutine that yielded on EAGAIN.
func (c *Conn) waitPolled(fd int, events int16, w *pollWait) error {
	for {
		if c.closing.Load() {
			return net.ErrClosed
		}
		w.fds[0] = unix.PollFd{Fd: int32(fd), Events: events}
		w.ts = unix.NsecToTimespec(pollWaitLimit)
		n, err := unix.Ppoll(w.fds[:], &w.ts, nil)
		switch {
		case err == unix.EINTR || (err == nil && n == 0):
			continue
		case err != nil:
			return os.NewSyscallError("ppoll", err)
		}
		return nil // ready, or hung up: the next call says which
	}
}

// rawWaitLimit bounds the reader's raw wait (waitReadable): longer than
// a reply of a running load takes to come, short enough that what became
// runnable meanwhile (a timer, the controller's command) waits little for
// the processor the wait holds.
const rawWaitLimit = 1_000_000 // ns

// waitReadable is the reader's wait for the socket. Where the reader has
// the process's one processor to itself (Conn.rawWait, set by
// readerThread), it waits first in a raw ppoll, which the runtime does not
// see: a wait through the runtime's syscall entry wakes sysmon when it
// sleeps deeply, as it does in a paused load, and a woken sysmon ticks
// every 20 µs for at least 50 ticks, each on the reader's core (see
// readerthread.go). What was runnable ran at the reader's yield before the
// reply; a wait that outlasts rawWaitLimit goes on through the runtime,
// which may then give the processor to others. A signal (a preemption
// request) is answered by a yield.
func (c *Conn) waitReadable(fd int) error {
	for c.rawWait && !c.closing.Load() {
		w := &c.rwait
		w.fds[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
		w.ts = unix.NsecToTimespec(rawWaitLimit)
		n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&w.fds[0])), 1, uintptr(unsafe.Pointer(&w.ts)), 0, 0, 0)
		switch {
		case e == 0 && n > 0:
			return nil // readable, or hung up: the next call says which
		case e == unix.EINTR:
			runtime.Gosched()
			continue
		}
		break
	}
	return c.waitPolled(fd, unix.POLLIN, &c.rwait)
}

// peekHangup, for a reader parked with nothing in flight (Client's
// awaitRequest), looks without waiting whether the peer hung up: a
// receive of one byte that leaves it queued (MSG_PEEK), raw, and not
// counted, since it reads nothing. io.EOF or the socket's error; nil while
// the connection is up.
func (c *Conn) peekHangup() error {
	if !c.polled || c.closing.Load() {
		return nil
	}
	var b [1]byte
	var n uintptr
	var e unix.Errno
	if err := c.raw.Control(func(fd uintptr) {
		n, _, e = unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	}); err != nil {
		return nil // closed meanwhile: the reader says why
	}
	switch {
	case e == 0 && n == 0:
		return io.EOF
	case e == 0, e == unix.EAGAIN, e == unix.EINTR:
		return nil
	}
	return os.NewSyscallError("recvfrom", e)
}

// readPolled is readOnce for a polled socket: recvfrom(MSG_DONTWAIT) and,
// on EAGAIN, ppoll and again, until a call returns data, EOF or an error.
//
// The calls that never wait (MSG_DONTWAIT) are raw, so the thread keeps
// its P: through the runtime's syscall entry, sysmon may take the P from a
// call past 20 µs (a 2 MiB copy takes longer) and wake another thread to
// hold it. ppoll, which does wait, is the one call made through it.
func (c *Conn) readPolled(fd uintptr) bool {
	for {
		p := c.rbuf
		r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_DONTWAIT, 0, 0)
		if e == unix.EAGAIN {
			c.ctr.recvEAGAIN.Add(1)
			if c.turnLoop() {
				continue // the socket became readable during the turn
			}
			if err := c.waitReadable(int(fd)); err != nil {
				c.rn, c.rerr = 0, err
				return true
			}
			continue
		}
		c.ctr.recvCalls.Add(1)
		if e == unix.EINTR {
			continue
		}
		c.rn, c.rerr = int(r), errnoErr(e)
		return true
	}
}

// sendPolled makes one send call of bufs without waiting: sendto for one
// buffer, sendmsg for several (qemu's qio_channel_socket_writev).
func (c *Conn) sendPolled(fd uintptr, bufs [][]byte) (int, unix.Errno) {
	const flags = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL
	if len(bufs) == 1 {
		p := bufs[0]
		r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags, 0, 0)
		return int(r), e
	}
	iov := appendIovecs(c.iov[:0], bufs)
	var msg unix.Msghdr
	msg.Iov = &iov[0]
	msg.SetIovlen(len(iov))
	r, _, e := unix.RawSyscall(unix.SYS_SENDMSG, fd, uintptr(unsafe.Pointer(&msg)), flags)
	clear(iov) // hold no caller buffer after the call
	c.iov = iov[:0]
	return int(r), e
}

// writePolled is writeOnce for a polled socket: on EAGAIN it waits in
// ppoll for room, then sends again.
func (c *Conn) writePolled(fd uintptr) bool {
	for {
		n, e := c.sendPolled(fd, c.wvecs)
		if e == unix.EAGAIN {
			c.ctr.sendEAGAIN.Add(1)
			if err := c.waitPolled(int(fd), unix.POLLOUT, &c.wwait); err != nil {
				c.wn, c.werr = 0, err
				return true
			}
			continue
		}
		c.ctr.sendCalls.Add(1)
		if e == unix.EINTR {
			continue
		}
		c.wn, c.werr = n, errnoErr(e)
		return true
	}
}

// tryWritePolled is tryWriteOnce for a polled socket: one send, never a
// wait.
func (c *Conn) tryWritePolled(fd uintptr) bool {
	c.tvec[0] = c.tp
	n, e := c.sendPolled(fd, c.tvec[:])
	c.tvec[0] = nil
	c.wn, c.werr = n, nil
	switch e {
	case unix.EAGAIN:
		c.ctr.sendEAGAIN.Add(1)
		c.wn = 0
	case unix.EINTR:
		c.ctr.sendCalls.Add(1)
		c.wn = 0
	default:
		c.ctr.sendCalls.Add(1)
		c.werr = errnoErr(e)
	}
	return true
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
