package sockdiag

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pidfdReader reads sockets through momentary duplicates of their
// holders' descriptors: pidfd_getfd, fstat (the descriptor still holds
// that socket: a process reuses the numbers it closed), one
// getsockopt(SO_MEMINFO), close. Measured here about 1.7 µs a socket
// against 4–25 µs a netlink lookup (BenchmarkHeldRead16). It keeps one
// pidfd per process, so that a PID reused by a new process cannot be
// mistaken for the old one. It belongs to the sampling goroutine.
type pidfdReader struct {
	pidfds map[int]int
}

func newPidfdReader() *pidfdReader { return &pidfdReader{pidfds: map[int]int{}} }

// The four calls of a read are made as raw system calls, which do not
// tell Go's scheduler they may block: none of them does (pidfd_getfd and
// fstat look a table up, getsockopt(SO_MEMINFO) copies counters, and
// closing a duplicate drops a reference; the last one, when the process
// closed the socket meanwhile, releases it without waiting, as no data
// socket here lingers). Made the ordinary way, 64 calls a tick kept the
// runtime's monitor thread waking to take processors back from calls
// that had long ended, which cost more than the calls themselves
// (BenchmarkSampler, held).
func (r *pidfdReader) heldMem(h FD) (MemInfo, error) {
	pfd, err := r.pidfd(h.PID)
	if err != nil {
		return MemInfo{}, err
	}
	d, _, errno := unix.RawSyscall(unix.SYS_PIDFD_GETFD, uintptr(pfd), uintptr(h.FD), 0)
	if errno != 0 {
		return MemInfo{}, r.getfdError(h.PID, errno)
	}
	dup := int(d)
	defer unix.RawSyscall(unix.SYS_CLOSE, uintptr(dup), 0, 0)
	var st unix.Stat_t
	if _, _, errno := unix.RawSyscall(unix.SYS_FSTAT, uintptr(dup), uintptr(unsafe.Pointer(&st)), 0); errno != 0 || st.Ino != uint64(h.Inode) {
		return MemInfo{}, errHeldMoved
	}
	return soMemInfo(h.PID, dup)
}

func (r *pidfdReader) pidfd(pid int) (int, error) {
	if fd, ok := r.pidfds[pid]; ok {
		return fd, nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return -1, errHeldMoved
	}
	if err != nil {
		return -1, &heldRefusal{PID: pid, Err: err} // ENOSYS: before Linux 5.3
	}
	r.pidfds[pid] = fd
	return fd, nil
}

// getfdError sorts pidfd_getfd's failures: the descriptor or the process
// is gone (the socket may live on elsewhere), or duplicates are refused.
func (r *pidfdReader) getfdError(pid int, err error) error {
	switch {
	case errors.Is(err, unix.EBADF):
		return errHeldMoved
	case errors.Is(err, unix.ESRCH):
		r.forget(pid)
		return errHeldMoved
	}
	return &heldRefusal{PID: pid, Err: err} // EPERM, ENOSYS (before 5.6)
}

// The array getsockopt fills is the kernel's whole SK_MEMINFO array: a
// build fails here if x/sys and MemInfo come to disagree on its length.
var _ = [1]struct{}{}[unix.SK_MEMINFO_VARS-skMemInfoVars]

// soMemInfo reads the SK_MEMINFO array of a socket one holds, the one
// sock_diag reports (SO_MEMINFO, Linux 4.12).
func soMemInfo(pid, fd int) (MemInfo, error) {
	var m [skMemInfoVars]uint32
	size := uint32(unsafe.Sizeof(m))
	_, _, errno := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_MEMINFO,
		uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&size)), 0)
	if errno != 0 {
		return MemInfo{}, &heldRefusal{PID: pid, Err: errno}
	}
	n := int(size / 4)
	if n < 4 {
		return MemInfo{}, &heldRefusal{PID: pid, Err: errNoMemInfo}
	}
	return memInfoOf(&m, n), nil
}

func (r *pidfdReader) forget(pid int) {
	if fd, ok := r.pidfds[pid]; ok {
		unix.Close(fd)
		delete(r.pidfds, pid)
	}
}

func (r *pidfdReader) forgetHolders(keep map[int]bool) {
	for pid := range r.pidfds {
		if !keep[pid] {
			r.forget(pid)
		}
	}
}

func (r *pidfdReader) Close() error {
	r.forgetHolders(nil)
	return nil
}

// samplerProbe is what a Linux sampler reads through: its own sock_diag
// socket and its own pidfds.
type samplerProbe struct {
	*Conn
	held *pidfdReader
}

func (p samplerProbe) heldMem(h FD) (MemInfo, Kind, error) {
	m, err := p.held.heldMem(h)
	return m, 0, err // the kind comes from the listing that found the socket
}
func (p samplerProbe) forgetHolders(keep map[int]bool) { p.held.forgetHolders(keep) }

func (p samplerProbe) Close() error {
	p.held.Close()
	return p.Conn.Close()
}
