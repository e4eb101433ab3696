package child

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// rawCommands reads the commands' pipe with raw read(2) calls and waits
// for it in the netpoller. A read through the runtime's syscall entry
// wakes sysmon when it sleeps deeply, as it does in a paused load: the
// measurement command that resumes the load then started it with some 60
// of sysmon's 20 µs ticks on the load's core (nbd's readerthread.go). A
// read that does not wait has nothing for sysmon to do.
type rawCommands struct{ rc syscall.RawConn }

// commandReader is f read raw where it is in the netpoller, else f.
func commandReader(f *os.File) io.Reader {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return rawCommands{rc}
}

func (r rawCommands) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var e syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, _, e = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e != syscall.EINTR {
				return e != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case e != 0:
		return 0, os.NewSyscallError("read", e)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}
