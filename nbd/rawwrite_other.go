//go:build !linux

package nbd

import "golang.org/x/sys/unix"

// writeNoWait makes one write(2) of bufs (writev(2) for several) on a
// non-blocking socket, through the runtime's syscall entry (raw calls
// are Linux's: see rawwrite_linux.go).
func (c *Conn) writeNoWait(fd uintptr, bufs [][]byte) (int, error) {
	if len(bufs) == 1 {
		return unix.Write(int(fd), bufs[0])
	}
	return unix.Writev(int(fd), bufs)
}
