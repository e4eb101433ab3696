package sockdiag

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// recvBufLen holds one datagram of a dump: the kernel fills dump skbs of up
// to 32 KiB (netlink_dump's max(NLMSG_GOODSIZE, 32k) when the receive
// buffer allows), and flags MSG_TRUNC if one were bigger.
const recvBufLen = 64 << 10

// replyTimeout bounds every wait for the kernel's answer. sock_diag answers
// at once (an exact lookup inside sendmsg, a dump as it is read), so
// reaching it means something is badly wrong, not that the kernel is slow.
const replyTimeout = 2 // seconds

// Conn is a NETLINK_SOCK_DIAG socket. Its methods may be called from
// several goroutines; they take turns.
type Conn struct {
	mu  sync.Mutex
	fd  int
	seq uint32
	req []byte
	buf []byte
	// tap, when set (by tests), sees every datagram of every answer: it is
	// how the fuzz tests' seed corpus gets real replies.
	tap func(datagram []byte)
}

// Dial opens a sock_diag socket. It needs no privileges: sock_diag
// describes the sockets of the caller's network namespace.
func Dial() (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: open a NETLINK_SOCK_DIAG socket: %w", err)
	}
	tv := unix.Timeval{Sec: replyTimeout}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag: set a receive timeout: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag: bind the netlink socket: %w", err)
	}
	return &Conn{fd: fd, buf: make([]byte, recvBufLen)}, nil
}

// Close closes the socket.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return err
}

// roundTrip sends the request build writes (given the sequence number to
// use) and hands each datagram of the answer to parse until parse says the
// answer is complete. The caller holds c.mu.
func (c *Conn) roundTrip(build func(b []byte, seq uint32) []byte, parse func(b []byte, seq uint32) (bool, error)) error {
	if c.fd < 0 {
		return errors.New("sock_diag: connection closed")
	}
	c.seq++
	seq := c.seq
	c.req = build(c.req[:0], seq)
	kernel := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	for {
		err := unix.Sendto(c.fd, c.req, 0, kernel)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return fmt.Errorf("sock_diag: send request: %w", err)
		}
	}
	// A dump can be any number of datagrams; each holds at least one
	// socket or the end, so the bound below is far beyond any real table
	// and only stops a kernel (or test double) that never ends a reply.
	for range 1 << 20 {
		n, _, flags, _, err := unix.Recvmsg(c.fd, c.buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if err == unix.EAGAIN {
				return fmt.Errorf("sock_diag: no answer from the kernel within %d s", replyTimeout)
			}
			return fmt.Errorf("sock_diag: receive answer: %w", err)
		}
		if flags&unix.MSG_TRUNC != 0 {
			return fmt.Errorf("%w: a reply datagram was larger than %d bytes", ErrMalformed, len(c.buf))
		}
		if c.tap != nil {
			c.tap(c.buf[:n])
		}
		done, err := parse(c.buf[:n], seq)
		if err != nil || done {
			return err
		}
	}
	return fmt.Errorf("%w: the kernel's reply never ended", ErrMalformed)
}

// UnixSockets lists every unix socket of the network namespace (one dump),
// appended to dst.
func (c *Conn) UnixSockets(dst []UnixSocket) ([]UnixSocket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unixDump(dst, unixShowAll)
}

func (c *Conn) unixDump(dst []UnixSocket, show uint32) ([]UnixSocket, error) {
	err := c.roundTrip(
		func(b []byte, seq uint32) []byte { return appendUnixRequest(b, seq, 0, NoCookie, show) },
		func(b []byte, seq uint32) (done bool, err error) {
			dst, done, err = ParseUnixDiag(b, seq, dst)
			return done, err
		})
	if err != nil {
		return dst, fmt.Errorf("unix_diag dump: %w", err)
	}
	return dst, nil
}

// UnixSocket looks up the unix socket with inode ino (one exact lookup).
// cookie is the one it had when first seen, or NoCookie. A socket that was
// closed, or whose inode now names another socket, gives an error that
// errors.Is(err, ErrGone).
func (c *Conn) UnixSocket(ino Inode, cookie Cookie) (UnixSocket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unixExact(ino, cookie, unixShowAll)
}

func (c *Conn) unixExact(ino Inode, cookie Cookie, show uint32) (UnixSocket, error) {
	if ino == 0 {
		return UnixSocket{}, errors.New("unix_diag lookup: inode 0 names no socket")
	}
	var got []UnixSocket
	err := c.roundTrip(
		func(b []byte, seq uint32) []byte { return appendUnixRequest(b, seq, ino, cookie, show) },
		func(b []byte, seq uint32) (done bool, err error) {
			got, done, err = ParseUnixDiag(b, seq, got[:0])
			return done, err
		})
	if err != nil {
		return UnixSocket{}, fmt.Errorf("unix_diag lookup of socket %d: %w", ino, err)
	}
	if len(got) != 1 || got[0].Inode != ino {
		return UnixSocket{}, fmt.Errorf("%w: unix_diag lookup of socket %d answered with %d sockets", ErrMalformed, ino, len(got))
	}
	return got[0], nil
}

// TCPSockets lists the TCP sockets over IPv4 and IPv6 of the network
// namespace in any state but TIME_WAIT and SYN_RECV (which no file holds),
// appended to dst.
func (c *Conn) TCPSockets(dst []TCPSocket) ([]TCPSocket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	for _, fam := range []uint8{afInet, afInet6} {
		if dst, err = c.tcpDump(dst, fam, heldStates); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// heldStates are the TCP states a socket an application holds can be in.
const heldStates = allStates &^ (1<<StateTimeWait | 1<<StateSynRecv)

func (c *Conn) tcpDump(dst []TCPSocket, family uint8, states uint32) ([]TCPSocket, error) {
	err := c.roundTrip(
		func(b []byte, seq uint32) []byte { return appendInetRequest(b, seq, family, states, nil, NoCookie) },
		func(b []byte, seq uint32) (done bool, err error) {
			dst, done, err = ParseInetDiag(b, seq, dst)
			return done, err
		})
	if err != nil {
		return dst, fmt.Errorf("inet_diag dump (family %d): %w", family, err)
	}
	return dst, nil
}

// TCPSocket looks up one TCP connection again by its 4-tuple, as an earlier
// listing described it (an exact lookup: a hash lookup in the kernel). The
// cookie must still match, and the socket must still be held by a file: a
// connection its holders closed (it lingers as FIN_WAIT or TIME_WAIT, with
// inode 0), or a new one on the same 4-tuple, gives an error that
// errors.Is(err, ErrGone).
func (c *Conn) TCPSocket(s TCPSocket) (TCPSocket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := s.key()
	got, err := c.tcpExact(&k, s.Cookie)
	if err == nil && s.Inode != 0 && got.Inode != s.Inode {
		return TCPSocket{}, fmt.Errorf("inet_diag lookup of %v → %v: socket %d: %w (its files are closed)", k.local, k.remote, s.Inode, ErrGone)
	}
	return got, err
}

func (c *Conn) tcpExact(k *tcpKey, cookie Cookie) (TCPSocket, error) {
	var got []TCPSocket
	err := c.roundTrip(
		func(b []byte, seq uint32) []byte { return appendInetRequest(b, seq, k.family, allStates, k, cookie) },
		func(b []byte, seq uint32) (done bool, err error) {
			got, done, err = ParseInetDiag(b, seq, got[:0])
			return done, err
		})
	if err != nil {
		return TCPSocket{}, fmt.Errorf("inet_diag lookup of %v → %v: %w", k.local, k.remote, err)
	}
	if len(got) != 1 {
		return TCPSocket{}, fmt.Errorf("%w: inet_diag lookup of %v → %v answered with %d sockets", ErrMalformed, k.local, k.remote, len(got))
	}
	return got[0], nil
}

// Describe says what each socket among fds is, from one listing of the
// namespace's unix sockets and one of its TCP sockets (see describe): kind,
// the kernel's figures and the peer. Sockets of other families are left
// out. Join the result of two trees with Links to see who talks to whom.
func (c *Conn) Describe(fds []FD) ([]Socket, error) {
	unixSocks, err := c.UnixSockets(nil)
	if err != nil {
		return nil, err
	}
	tcpSocks, err := c.TCPSockets(nil)
	if err != nil {
		return nil, err
	}
	return describe(fds, unixSocks, tcpSocks), nil
}
