package nbd

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// noSigPipe sets SO_NOSIGPIPE on a data socket. macOS has no
// MSG_NOSIGNAL: a write to a socket whose peer has gone raises SIGPIPE
// unless the socket says not to (XNU uipc_socket.c, sosetoptlock:
// "case SO_NOSIGPIPE: ... so->so_flags |= SOF_NOSIGPIPE"). With it the
// write just fails with EPIPE, whatever the process does with the signal
// (a child ignores it, engine/child/child.go; a library user may not), and
// no signal is raised per failed write.
func noSigPipe(raw syscall.RawConn) error {
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("nbd: setting SO_NOSIGPIPE: %w", serr)
	}
	return nil
}

// NoSigPipeSet reports whether SO_NOSIGPIPE is set on a connection.
func (c *Conn) NoSigPipeSet() (bool, error) {
	var v int
	var gerr error
	if err := c.raw.Control(func(fd uintptr) {
		v, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NOSIGPIPE)
	}); err != nil {
		return false, err
	}
	return v != 0, gerr
}
