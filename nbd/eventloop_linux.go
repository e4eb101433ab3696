package nbd

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetEventLoop switches the reader's event-loop turns on or off (see
// eventLoop). It reports false, changing nothing, where the connection is
// not read by the ppoll reader. Safe to call while the reader runs.
func (c *Conn) SetEventLoop(on bool) (bool, error) {
	if !c.polled {
		return false, nil
	}
	c.loopMu.Lock()
	defer c.loopMu.Unlock()
	l := c.loop.Load()
	if l == nil {
		if !on {
			return true, nil
		}
		efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return false, os.NewSyscallError("eventfd", err)
		}
		l = &eventLoop{efd: efd, sock: c.pfd}
		c.loop.Store(l)
	}
	l.on.Store(on)
	return true, nil
}

// closeLoop drops the eventfd once the reader is done with it.
func (c *Conn) closeLoop() {
	if l := c.loop.Load(); l != nil {
		unix.Close(l.efd)
	}
}

// turn is one turn of qemu's main loop with a bottom half pending: the
// notifier written (twice, as qemu-img writes it about twice a turn), a
// ppoll that finds it readable and so returns at once, and the read that
// clears it. The calls never wait, so they are raw and the thread keeps
// its P.
func (l *eventLoop) turn() (readable bool) {
	one := uint64(1)
	p := uintptr(unsafe.Pointer(&one))
	unix.RawSyscall(unix.SYS_WRITE, uintptr(l.efd), p, 8)
	unix.RawSyscall(unix.SYS_WRITE, uintptr(l.efd), p, 8)
	fds := [2]unix.PollFd{{Fd: int32(l.sock), Events: unix.POLLIN}, {Fd: int32(l.efd), Events: unix.POLLIN}}
	var ts unix.Timespec
	unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	var v uint64
	unix.RawSyscall(unix.SYS_READ, uintptr(l.efd), uintptr(unsafe.Pointer(&v)), 8)
	return fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
}
