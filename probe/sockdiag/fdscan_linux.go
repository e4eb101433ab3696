package sockdiag

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// scanSockets appends the sockets pid holds, from the links in
// /proc/PID/fd, unsorted: the directory opened, listed (getdents64) and
// each link read relative to it (readlinkat), as raw system calls into
// buffers kept from scan to scan. The fill's look scans both ends of each
// side at every poll (16 scans a second): through os.Open, Readdirnames
// and os.Readlink each scan also made an fstat, an fcntl and a refused
// epoll_ctl, allocated every name and link, and entered each call as one
// that may block, which on one processor let the runtime's monitor take
// the processor back from a call descheduled by a loaded machine and
// hand it to another thread (the controller's wake-ups). None of these
// calls waits on anything but a table of the kernel's.
func scanSockets(pid int, dst []FD) ([]FD, error) {
	var pathBuf [96]byte
	path := append(pathBuf[:0], procRoot...)
	path = append(path, '/')
	path = strconv.AppendInt(path, int64(pid), 10)
	path = append(path, "/fd\x00"...)
	cwd := unix.AT_FDCWD // a relative procRoot (tests)
	dfd, _, errno := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])),
		unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0)
	if errno != 0 {
		return dst, &fs.PathError{Op: "open", Path: string(path[:len(path)-1]), Err: errno}
	}
	defer unix.RawSyscall(unix.SYS_CLOSE, dfd, 0, 0)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var link [64]byte // a socket's link, socket:[INODE], is at most 19 bytes
	for seen := 0; seen < maxFDs; {
		n, _, errno := unix.RawSyscall(unix.SYS_GETDENTS64, dfd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if errno != 0 {
			return dst, &fs.PathError{Op: "readdirent", Path: string(path[:len(path)-1]), Err: errno}
		}
		if n == 0 {
			break
		}
		for off := 0; off < int(n) && seen < maxFDs; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the name, NUL-terminated.
			rec := buf[off:int(n)]
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 20 || reclen > len(rec) {
				break // not a record: the rest of the batch is not read
			}
			off += reclen
			name := rec[19:reclen]
			end := bytes.IndexByte(name, 0)
			if end < 0 {
				continue
			}
			fd, ok := fdNumber(name[:end])
			if !ok {
				continue // "." and ".."
			}
			seen++
			ln, _, errno := unix.RawSyscall6(unix.SYS_READLINKAT, dfd, uintptr(unsafe.Pointer(&name[0])),
				uintptr(unsafe.Pointer(&link[0])), uintptr(len(link)), 0, 0)
			if errno != 0 || int(ln) >= len(link) {
				continue // closed since the listing; or a long path, not a socket
			}
			if ino, ok := socketInodeOf(link[:ln]); ok {
				dst = append(dst, FD{PID: pid, FD: fd, Inode: ino})
			}
		}
	}
	return dst, nil
}

// direntBufs are getdents64's buffers, 8 KiB: some 300 descriptors a call.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// fdNumber reads a descriptor's name; false for anything but digits.
func fdNumber(name []byte) (int, bool) {
	if len(name) == 0 || len(name) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// socketInodeOf is socketInode of a link read into a buffer.
func socketInodeOf(link []byte) (Inode, bool) {
	const pre, post = "socket:[", "]"
	if len(link) <= len(pre)+len(post) || string(link[:len(pre)]) != pre || link[len(link)-1] != post[0] {
		return 0, false
	}
	var n uint64
	for _, c := range link[len(pre) : len(link)-1] {
		if c < '0' || c > '9' || n > (1<<32-1)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n == 0 || n > 1<<32-1 {
		return 0, false
	}
	return Inode(n), true
}
