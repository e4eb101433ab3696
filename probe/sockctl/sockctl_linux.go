package sockctl

import (
	"errors"
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// noSuchFD is an fd number no process has: pidfd_getfd checks the right
// to take a process's fds before it looks the fd up, so asking for this
// one tells permission (EBADF) from refusal (EPERM) without touching any
// real fd.
const noSuchFD = math.MaxInt32

// Process is a handle on another process, held through a pidfd so that
// the process cannot be mistaken for a later one with the same PID.
type Process struct {
	pid   int
	pidfd int
}

// Open takes hold of process pid and checks that this process may take
// its fds: nil error means Get and Set will be allowed (while the process
// lives). Close releases it.
func Open(pid int) (*Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("changing socket buffers: bad process id %d", pid)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, classify(err, pid, -1)
	}
	p := &Process{pid: pid, pidfd: pidfd}
	fd, err := unix.PidfdGetfd(pidfd, noSuchFD, 0)
	if err == nil {
		unix.Close(fd) // cannot happen: no fd table is that large
	} else if !errors.Is(err, unix.EBADF) {
		p.Close()
		return nil, classify(err, pid, -1)
	}
	return p, nil
}

// PID is the process's id.
func (p *Process) PID() int { return p.pid }

// Get reads the buffer o of the process's fd, as the socket has it (on
// Linux, twice what was asked for with setsockopt).
func (p *Process) Get(fd int, o Option) (int, error) {
	var v int
	err := p.withDup(fd, func(dup int) error {
		var err error
		v, err = unix.GetsockoptInt(dup, unix.SOL_SOCKET, sockopt(o))
		return err
	})
	return v, err
}

// Set asks for buffer o of bytes on the process's fd and returns the
// value the socket then has (Linux doubles the request and clamps it to
// twice net.core.wmem_max or rmem_max, silently).
func (p *Process) Set(fd int, o Option, bytes int) (effective int, err error) {
	if bytes <= 0 || bytes > math.MaxInt32 {
		return 0, fmt.Errorf("changing %s of fd %d of process %d: bad size %d", o, fd, p.pid, bytes)
	}
	err = p.withDup(fd, func(dup int) error {
		if err := unix.SetsockoptInt(dup, unix.SOL_SOCKET, sockopt(o), bytes); err != nil {
			return err
		}
		var err error
		effective, err = unix.GetsockoptInt(dup, unix.SOL_SOCKET, sockopt(o))
		return err
	})
	return effective, err
}

// withDup runs f on a duplicate of the process's fd, and closes the
// duplicate whatever happens.
func (p *Process) withDup(fd int, f func(dup int) error) error {
	if p.pidfd < 0 {
		return fmt.Errorf("changing socket buffers of process %d: closed", p.pid)
	}
	if fd < 0 {
		return fmt.Errorf("changing socket buffers of process %d: bad fd %d", p.pid, fd)
	}
	dup, err := unix.PidfdGetfd(p.pidfd, fd, 0)
	if err != nil {
		return classify(err, p.pid, fd)
	}
	defer unix.Close(dup)
	if err := f(dup); err != nil {
		return classify(err, p.pid, fd)
	}
	return nil
}

// Close releases the process.
func (p *Process) Close() error {
	if p.pidfd < 0 {
		return nil
	}
	err := unix.Close(p.pidfd)
	p.pidfd = -1
	return err
}

func sockopt(o Option) int {
	if o == RecvBuf {
		return unix.SO_RCVBUF
	}
	return unix.SO_SNDBUF
}

// classify turns a failed call on process pid (and fd, or -1) into an
// *Error where the reason is known.
func classify(err error, pid, fd int) error {
	e := &Error{PID: pid, FD: fd, Err: err}
	switch {
	case errors.Is(err, unix.ESRCH):
		e.Reason, e.Why = ReasonGone, fmt.Sprintf("process %d has exited", pid)
	case errors.Is(err, unix.ENOSYS):
		e.Reason = ReasonOldKernel
		e.Why = "this kernel (" + kernelRelease() + ") has no pidfd_getfd, which takes another process's fd: it needs Linux 5.6 or later"
		e.Fix = "upgrade to Linux 5.6 or later"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return explainRefusal(err, pid, fd, readFacts(pid))
	case errors.Is(err, unix.EBADF) && fd >= 0:
		e.Reason, e.Why = ReasonNoFD, fmt.Sprintf("process %d has no fd %d (closed?)", pid, fd)
	case errors.Is(err, unix.ENOTSOCK):
		e.Reason, e.Why = ReasonNotSocket, fmt.Sprintf("fd %d of process %d is not a socket", fd, pid)
	case errors.Is(err, unix.EINVAL) && fd < 0:
		return fmt.Errorf("changing socket buffers: %d is not a process id (a thread's?): %w", pid, err)
	default:
		return fmt.Errorf("changing socket buffers of process %d, fd %d: %w", pid, fd, err)
	}
	return e
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "unknown release"
	}
	return "Linux " + unix.ByteSliceToString(u.Release[:])
}
