package child

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapAnon maps n bytes of fresh anonymous memory.
//
// The calls are raw: they never wait, so the thread keeps its P, as the
// ppoll reader's receive calls do (nbd/pollwait_linux.go). Through the
// runtime's syscall entry, sysmon finds the P of a thread in a long
// munmap (2 MiB, a TLB shootdown) in a system call, takes it and wakes
// another thread to hold it, and keeps waking every 20 µs while it finds
// such work: against qemu-nbd's zeroes, where the scan mode maps and
// unmaps a bounce buffer per request as qemu-img does, that was 1990
// sysmon wake-ups a second and 2198 preemptions of the reader (per-thread
// /proc counts), about 6 wake-ups per 2 MiB where qemu-img makes 0.1.
func mapAnon(n int) ([]byte, error) {
	p, _, e := unix.RawSyscall6(unix.SYS_MMAP, 0, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uintptr(0), 0)
	if e != 0 {
		return nil, e
	}
	// The kernel's address, not a Go pointer: read as one without the
	// uintptr conversion vet cannot check.
	return unsafe.Slice(*(**byte)(unsafe.Pointer(&p)), n), nil
}

// unmap drops a mapping of mapAnon.
func unmap(b []byte) error {
	if _, _, e := unix.RawSyscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0); e != 0 {
		return e
	}
	return nil
}
