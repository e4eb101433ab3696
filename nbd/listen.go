package nbd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ListenUnix binds a unix socket at path, created 0600 so that only the
// user can connect. An existing file is replaced only when it is a stale
// socket (nobody answers on it); a live socket or any other kind of file is
// an error, so a typo never deletes user data. The socket file is removed
// when the listener is closed.
func ListenUnix(path string) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; refusing to replace it", path)
		}
		c, err := net.DialTimeout("unix", path, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is in use by another server", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// ProbeSocketBuffer creates a fresh stream socket of the given family
// ("unix" or "tcp"), reads its default buffer size, then requests size (if
// > 0) and reads back what the kernel made of it.
func ProbeSocketBuffer(network string, which SockBuf, size int) (defaultEff, effective int, err error) {
	fam := unix.AF_UNIX
	if network == "tcp" {
		fam = unix.AF_INET
	}
	fd, err := unix.Socket(fam, unix.SOCK_STREAM, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("probe socket: %w", err)
	}
	defer unix.Close(fd)
	defaultEff, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, int(which))
	if err != nil {
		return 0, 0, fmt.Errorf("probe getsockopt: %w", err)
	}
	if size <= 0 {
		return defaultEff, defaultEff, nil
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, int(which), size); err != nil {
		return defaultEff, 0, fmt.Errorf("probe setsockopt %s=%d: %w", which, size, err)
	}
	effective, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, int(which))
	return defaultEff, effective, err
}
