package sockdiag

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// macOS: proc_info(2), the system call behind libproc's proc_pidfdinfo,
// proc_pidinfo and proc_listpids, called directly (no cgo). Its
// arguments, from XNU's bsd/kern/proc_info.c: a call number, a PID (for
// PROC_INFO_CALL_LISTPIDS the list's type), a flavor (the type's argument),
// a 64-bit argument (the descriptor), the buffer and its size; it returns
// the bytes it wrote.
const (
	procInfoCallListPIDs  = 1
	procInfoCallPIDInfo   = 2
	procInfoCallPIDFDInfo = 3

	procPPIDOnly        = 6 // PROC_PPID_ONLY
	procPIDListFDs      = 1 // PROC_PIDLISTFDS
	procPIDFDSocketInfo = 3 // PROC_PIDFDSOCKETINFO
)

func procInfo(call, pid, flavor int, arg uint64, buf []byte) (int, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	r, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, uintptr(call), uintptr(pid), uintptr(flavor),
		uintptr(arg), uintptr(p), uintptr(len(buf)))
	switch errno {
	case 0:
		return int(r), nil
	case unix.ESRCH, unix.EBADF:
		return 0, fmt.Errorf("proc_info: %w (%v)", ErrGone, errno)
	case unix.EPERM:
		return 0, fmt.Errorf("%w: PID %d", errXNUDenied, pid)
	}
	return 0, fmt.Errorf("proc_info: %w", errno)
}

// sysProcInfo is the kernel itself.
type sysProcInfo struct{}

func (sysProcInfo) socketFdinfo(pid, fd int, buf []byte) (int, error) {
	return procInfo(procInfoCallPIDFDInfo, pid, procPIDFDSocketInfo, uint64(fd), buf[:xnuFdinfoSize])
}

func (sysProcInfo) socketFDs(pid int) ([]int, error) {
	// struct proc_fdinfo: the fd, then its type.
	return listInts(8, maxFDs, func(b []byte) (int, error) {
		return procInfo(procInfoCallPIDInfo, pid, procPIDListFDs, 0, b)
	}, func(entry []byte) bool { return binary.LittleEndian.Uint32(entry[4:]) == xnuFDTypeSocket })
}

func (sysProcInfo) children(pid int) ([]int, error) {
	return listInts(4, maxProcs, func(b []byte) (int, error) {
		return procInfo(procInfoCallListPIDs, procPPIDOnly, pid, 0, b)
	}, func(entry []byte) bool { return int32(binary.LittleEndian.Uint32(entry)) > 0 })
}

// listInts reads a proc_info list of entries of size bytes, each starting
// with an int32, and gives the int32s of the entries keep takes. The
// buffer grows until the answer fits (a full buffer may have been cut),
// up to limit entries.
func listInts(size, limit int, read func([]byte) (int, error), keep func(entry []byte) bool) ([]int, error) {
	for n := 256; ; n *= 4 {
		buf := make([]byte, n*size)
		got, err := read(buf)
		if err != nil {
			return nil, err
		}
		if got < len(buf) || n >= limit {
			var out []int
			for i := 0; i+size <= min(got, len(buf)); i += size {
				if e := buf[i : i+size]; keep(e) {
					out = append(out, int(int32(binary.LittleEndian.Uint32(e))))
				}
			}
			return out, nil
		}
	}
}

// darwinPeers is the registry the Describe calls fill and the samplers
// read (xnu.go).
var darwinPeers = &peerRegistry{}

// Conn describes sockets on macOS, where there is no sock_diag socket to
// hold: each descriptor is read with proc_pidfdinfo.
type Conn struct{}

// Dial gives a Conn; on macOS it holds nothing.
func Dial() (*Conn, error) { return &Conn{}, nil }

// Close does nothing.
func (c *Conn) Close() error { return nil }

// Describe reads each descriptor's socket_fdinfo and joins them as on
// Linux; descriptors that are gone, or not unix or TCP sockets, are left
// out.
func (c *Conn) Describe(fds []FD) ([]Socket, error) {
	return xnuDescribe(sysProcInfo{}, darwinPeers, fds), nil
}

// ProcessSockets lists the unix and TCP sockets pid holds.
func ProcessSockets(pid int) ([]FD, error) { return xnuProcessSockets(sysProcInfo{}, pid) }

// Tree is pid and its descendants.
func Tree(pid int) ([]int, error) { return xnuTree(sysProcInfo{}, pid) }

// TreeSockets lists the unix and TCP sockets of pid's tree.
func TreeSockets(pid int) ([]FD, error) { return xnuTreeSockets(sysProcInfo{}, pid) }

// StartSampler starts sampling through proc_pidfdinfo: senders need
// holders (SetHeld), since macOS cannot look a socket up by itself.
func StartSampler(ctx context.Context, cfg SamplerConfig) (*Sampler, error) {
	s, err := newSampler(cfg, newXNUProber(sysProcInfo{}, darwinPeers))
	if err != nil {
		return nil, err
	}
	s.start(ctx)
	return s, nil
}
