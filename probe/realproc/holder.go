package realproc

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"nbdscope/nbd"
	"nbdscope/platform"
	"nbdscope/probe/sockdiag"
)

// Holder is the local process that serves a --target: the one holding its
// listening socket.
type Holder struct {
	PID     int    `json:"pid"`
	Command string `json:"command"` // its command line, arguments joined by spaces
}

// FindServer finds the process listening where target (an NBD URI) points:
// a unix socket's path, or a TCP port on a loopback address (or on every
// address). It looks the listener's inode up with sock_diag, then the
// process holding it in /proc/PID/fd (the lowest PID when several do: a
// forking server's parent). The error says why none was found: not local,
// no listener there, sock_diag not available, or a holder whose
// descriptors may not be read (another user's).
func FindServer(target string) (Holder, error) {
	u, err := nbd.ParseURI(target)
	if err != nil {
		return Holder{}, err
	}
	c, err := sockdiag.Dial()
	if err != nil {
		return Holder{}, err
	}
	defer c.Close()
	ino, err := listenerInode(c, u)
	if err != nil {
		return Holder{}, err
	}
	pid := holderOf(ino)
	if pid == 0 {
		return Holder{}, fmt.Errorf("no process of ours may read holds the listener of %s (another user's, without CAP_SYS_PTRACE?)", target)
	}
	return Holder{PID: pid, Command: cmdline(pid)}, nil
}

// listenerInode is the inode of the socket listening where u points.
func listenerInode(c *sockdiag.Conn, u nbd.URI) (sockdiag.Inode, error) {
	if u.Transport == "unix" {
		return unixListenerInode(c, u.Socket)
	}
	addr, err := netip.ParseAddr(u.Host)
	if u.Host == "localhost" {
		addr, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err != nil || !addr.IsLoopback() {
		return 0, fmt.Errorf("%s is not a loopback address: its server is not a local process nbdscope can look at", u.Host)
	}
	socks, err := c.TCPSockets(nil)
	if err != nil {
		return 0, err
	}
	for _, k := range socks {
		l := k.Local.Addr()
		if k.State == tcpListen && int(k.Local.Port()) == u.Port && k.Inode != 0 && (l.IsLoopback() || l.IsUnspecified()) {
			return k.Inode, nil
		}
	}
	return 0, fmt.Errorf("nothing listens on loopback port %d here", u.Port)
}

// unixListenerInode is the inode of the unix socket listening at path:
// the one bound to the file at path (the kernel's UNIX_DIAG_VFS), which is
// right whatever name the socket was bound under, or else the one bound
// under that name. A server that binds in a private directory and renames
// the socket into place, as nbdscope serve and qemu-nbd's callers do so
// that no client meets a half-made socket, has the private name in the
// kernel, not path; an abstract socket has no file, only its name.
func unixListenerInode(c *sockdiag.Conn, path string) (sockdiag.Inode, error) {
	socks, err := c.UnixSockets(nil)
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
		for _, k := range socks {
			if k.State == sockdiag.StateListen && k.Inode != 0 && k.VFS != nil && k.VFS.Is(st.Ino, uint64(st.Dev)) {
				return k.Inode, nil
			}
		}
	}
	for _, k := range socks {
		if k.State == sockdiag.StateListen && k.Name == path && k.Inode != 0 {
			return k.Inode, nil
		}
	}
	return 0, fmt.Errorf("nothing listens on %s here", path)
}

// holderOf is the lowest PID holding socket inode ino, 0 for none seen.
func holderOf(ino sockdiag.Inode) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	best := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || (best != 0 && pid >= best) {
			continue
		}
		fds, err := sockdiag.ProcessSockets(pid)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			if fd.Inode == ino {
				best = pid
				break
			}
		}
	}
	return best
}

// cmdline is pid's command line, "" when it cannot be read.
func cmdline(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
}

// LeadsGroup tells whether pid leads its own process group: then the
// group's CPU, wake-ups and faults (clientrun.GroupUsage) are its own and
// those of what it started, and no one else's.
func LeadsGroup(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f, ok := platform.StatFields(b) // state ppid pgrp …
	return ok && len(f) > 2 && f[2] == strconv.Itoa(pid)
}
