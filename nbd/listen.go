package nbd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// UnixListener is a listening unix socket whose file ListenUnix put in
// place; Close removes that file (if it is still ours) exactly once.
type UnixListener struct {
	*net.UnixListener
	path string
	fi   os.FileInfo // the socket file as bound, to recognise it on Close
	once sync.Once
	err  error
}

// Addr is the path clients connect to (the kernel still names the socket
// by the private path it was bound at).
func (l *UnixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

// Close stops listening and removes the socket file, unless another file
// has taken its place since.
func (l *UnixListener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close()
		if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.fi) {
			os.Remove(l.path)
		}
	})
	return l.err
}

// ListenUnix binds a unix socket at path that only the user can connect
// to, and that never exists with wider permissions, not even for an
// instant: it is bound inside a fresh 0700 directory next to path, made
// 0600 there, then renamed into place (the umask is process-wide, so
// narrowing it would race with every other goroutine creating files). An
// existing file is replaced only when it is a stale socket (nobody answers
// on it); a live socket or any other kind of file is an error, so a typo
// never deletes user data. The socket file is removed when the listener is
// closed.
//
// The same holds on macOS: XNU's unp_bind creates the vnode with
// ACCESSPERMS & ~umask, and unp_connect finds the listener by path lookup
// (which needs search permission on the private directory), then checks
// write permission on the vnode, whose v_socket a rename keeps.
func ListenUnix(path string) (*UnixListener, error) {
	// sun_path's size (less the NUL darwin insists on) bounds the name
	// both here and in every client's connect.
	maxLen := len(unix.RawSockaddrUnix{}.Path) - 1
	if len(path) > maxLen {
		return nil, fmt.Errorf("%s: socket path too long: %d bytes, the limit is %d", path, len(path), maxLen)
	}
	stale, err := checkSocketPath(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), privateDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: private directory to bind in: %w", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	if len(tmp) > maxLen {
		return nil, fmt.Errorf("%s: socket path too long: binding it privately needs %d bytes (%s), the limit is %d; use a shorter directory", path, len(tmp), tmp, maxLen)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	fi, err := placeSocket(tmp, path, stale)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &UnixListener{UnixListener: ln, path: path, fi: fi}, nil
}

// privateDirPrefix names the short-lived directory ListenUnix binds in; a
// process killed mid-bind leaves one behind (empty but for the socket).
const privateDirPrefix = ".nbdscope"

// checkSocketPath applies the replacement rule to whatever is at path now:
// nothing (nil), a stale socket (returned), or an error.
func checkSocketPath(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return nil, fmt.Errorf("%s exists and is not a socket; refusing to replace it", path)
	}
	c, err := net.DialTimeout("unix", path, 200*time.Millisecond)
	if err == nil {
		c.Close()
		return nil, fmt.Errorf("%s is in use by another server", path)
	}
	return fi, nil
}

// placeSocket makes the bound socket tmp 0600 and moves it to path, which
// must then hold nothing or the stale socket found before. The stale one is
// first moved into the private directory and removed only if it is the
// same file that was checked, so a file that took its place meanwhile is
// put back, never deleted; the final rename never replaces anything.
func placeSocket(tmp, path string, stale os.FileInfo) (os.FileInfo, error) {
	if err := os.Chmod(tmp, 0o600); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(tmp)
	if err != nil {
		return nil, err
	}
	if stale != nil {
		old := filepath.Join(filepath.Dir(tmp), "old")
		if err := os.Rename(path, old); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
		}
		if ofi, err := os.Lstat(old); err == nil {
			if !os.SameFile(ofi, stale) {
				renameNoReplace(old, path)
				return nil, fmt.Errorf("%s changed while being replaced; left alone", path)
			}
			os.Remove(old)
		}
	}
	if err := renameNoReplace(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%s appeared while binding; left alone", path)
		}
		return nil, fmt.Errorf("moving socket to %s: %w", path, err)
	}
	return fi, nil
}

// linkNoReplace is the portable no-replace rename: link fails when newpath
// exists.
func linkNoReplace(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		return err
	}
	return os.Remove(oldpath)
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
