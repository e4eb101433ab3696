package nbd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// IOStats is a snapshot of the I/O system calls made on data sockets.
//
// Calls are counted at the call itself: every read(2), write(2) or writev(2)
// issued on the socket's fd is one call. Calls that returned EAGAIN (the
// socket was not ready; Go's poller then waits) are counted apart from the
// calls that moved data, so RecvCalls+RecvEAGAIN is what `strace -c`
// reports as the calls of read, and the two can be compared directly.
type IOStats struct {
	RecvCalls  uint64 // read(2) calls that returned data, EOF or an error other than EAGAIN
	RecvEAGAIN uint64 // read(2) calls that returned EAGAIN
	RecvBytes  uint64
	SendCalls  uint64 // write(2)/writev(2) calls other than EAGAIN
	SendEAGAIN uint64 // write(2)/writev(2) calls that returned EAGAIN
	SendBytes  uint64
}

// Add returns the field-wise sum.
func (s IOStats) Add(o IOStats) IOStats {
	return IOStats{
		RecvCalls: s.RecvCalls + o.RecvCalls, RecvEAGAIN: s.RecvEAGAIN + o.RecvEAGAIN, RecvBytes: s.RecvBytes + o.RecvBytes,
		SendCalls: s.SendCalls + o.SendCalls, SendEAGAIN: s.SendEAGAIN + o.SendEAGAIN, SendBytes: s.SendBytes + o.SendBytes,
	}
}

// Sub returns s - o (for deltas between snapshots).
func (s IOStats) Sub(o IOStats) IOStats {
	return IOStats{
		RecvCalls: s.RecvCalls - o.RecvCalls, RecvEAGAIN: s.RecvEAGAIN - o.RecvEAGAIN, RecvBytes: s.RecvBytes - o.RecvBytes,
		SendCalls: s.SendCalls - o.SendCalls, SendEAGAIN: s.SendEAGAIN - o.SendEAGAIN, SendBytes: s.SendBytes - o.SendBytes,
	}
}

type ioCounters struct {
	recvCalls, recvEAGAIN, recvBytes atomic.Uint64
	sendCalls, sendEAGAIN, sendBytes atomic.Uint64
}

func (c *ioCounters) snapshot() IOStats {
	return IOStats{
		RecvCalls: c.recvCalls.Load(), RecvEAGAIN: c.recvEAGAIN.Load(), RecvBytes: c.recvBytes.Load(),
		SendCalls: c.sendCalls.Load(), SendEAGAIN: c.sendEAGAIN.Load(), SendBytes: c.sendBytes.Load(),
	}
}

// Conn is a data socket whose every I/O system call is made by us through
// syscall.RawConn, so it can be counted exactly, and whose socket buffers can
// be read and changed while it is in use.
//
// Reads must come from one goroutine at a time and writes from one goroutine
// at a time (the server and client guarantee this); the two may overlap.
type Conn struct {
	nc  net.Conn
	raw syscall.RawConn
	ctr ioCounters

	// The closures handed to RawConn are built once, so that a read or a
	// write allocates nothing.
	ahead struct {
		b    []byte
		r, w int
	}
	rbuf  []byte
	rn    int
	rerr  error
	rfn   func(fd uintptr) bool
	wvecs [][]byte
	wv    [][]byte     // Writev's own copy of the caller's buffers
	wiov  []unix.Iovec // writeNoWait's iovecs (Linux)
	wn    int
	werr  error
	wfn   func(fd uintptr) bool
	tp    []byte // TryWrite's buffer
	tfn   func(fd uintptr) bool

	// A connection moved out of Go's netpoller (ReaderPoll, Linux): its
	// duplicated descriptor, kept blocking, on which each call says
	// MSG_DONTWAIT and waits in ppoll(2) itself; closing is set by Close
	// to stop a wait.
	polled       bool
	file         *os.File
	closing      atomic.Bool
	rwait, wwait pollWait
	iov          []unix.Iovec
	tvec         [1][]byte
	pfd          int // the duplicate's descriptor
	// rawWait: the reader waits first in a raw ppoll (waitReadable); set
	// by the reader goroutine, which alone reads it.
	rawWait bool
	// The qemu-img event loop's turns on EAGAIN (eventloop.go), when on.
	loopMu sync.Mutex
	loop   atomic.Pointer[eventLoop]

	// locked holds, per buffer, whether SetBuffer ever set it. Linux marks
	// a socket whose SO_SNDBUF/SO_RCVBUF was set (SOCK_SNDBUF_LOCK,
	// SOCK_RCVBUF_LOCK), nothing clears the mark, and a marked TCP buffer
	// is no longer autotuned. The kernel does not report the mark, so the
	// socket's own history is how it is known.
	locked atomic.Uint32
}

// NewConn wraps a *net.UnixConn or *net.TCPConn.
func NewConn(nc net.Conn) (*Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("nbd: %T does not expose its file descriptor", nc)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	// Every data socket, client's and server's, is made here.
	if err := noSigPipe(raw); err != nil {
		return nil, err
	}
	c := &Conn{nc: nc, raw: raw}
	c.rfn = c.readOnce
	c.wfn = c.writeOnce
	c.tfn = c.tryWriteOnce
	return c, nil
}

// NetConn is the underlying connection (for deadlines, addresses, Close).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the socket.
func (c *Conn) Close() error {
	if c.polled {
		return c.closePolled()
	}
	return c.nc.Close()
}

// Polled reports whether the connection waits in ppoll(2) on its own
// descriptor (ReaderPoll) rather than in Go's netpoller.
func (c *Conn) Polled() bool { return c.polled }

// pollWait is one direction's ppoll(2) arguments, kept in the Conn so
// that a wait allocates nothing.
type pollWait struct {
	fds [1]unix.PollFd
	ts  unix.Timespec
}

// Stats returns this connection's counters.
func (c *Conn) Stats() IOStats { return c.ctr.snapshot() }

func (c *Conn) readOnce(fd uintptr) bool {
	n, err := unix.Read(int(fd), c.rbuf)
	if err == unix.EAGAIN {
		c.ctr.recvEAGAIN.Add(1)
		return false // let the poller wait, then we are called again
	}
	c.ctr.recvCalls.Add(1)
	if err == unix.EINTR {
		return false
	}
	c.rn, c.rerr = n, err
	return true
}

// readAhead is the size of the small read buffer. Headers are read through
// it, so one read(2) usually brings a header and the start of its payload
// (or several headers); a payload larger than what is buffered is then read
// straight into its final buffer. At most readAhead bytes of a payload are
// copied.
const readAhead = 16 << 10

// rawRead issues one read(2) (more if it returns EAGAIN or EINTR).
func (c *Conn) rawRead(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rbuf, c.rn, c.rerr = p, 0, nil
	err := c.raw.Read(c.rfn)
	c.rbuf = nil
	if err != nil || c.rerr != nil {
		return 0, rawErr("read", "read", err, c.rerr)
	}
	if c.rn == 0 {
		return 0, io.EOF
	}
	c.ctr.recvBytes.Add(uint64(c.rn))
	return c.rn, nil
}

// Read returns buffered data first, else reads from the socket: straight
// into p when p is at least readAhead long, through the buffer otherwise.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.ahead.r < c.ahead.w {
		n := copy(p, c.ahead.b[c.ahead.r:c.ahead.w])
		c.ahead.r += n
		return n, nil
	}
	if len(p) >= readAhead || c.polled {
		// A polled connection reads as qemu's client does: each part of
		// a reply (magic, header, chunk offset, data) by a call of its
		// own, exactly its length (nbd_receive_reply, nbd_read_eof).
		return c.rawRead(p)
	}
	if c.ahead.b == nil {
		c.ahead.b = make([]byte, readAhead)
	}
	n, err := c.rawRead(c.ahead.b)
	c.ahead.r, c.ahead.w = 0, n
	if n == 0 {
		return 0, err
	}
	k := copy(p, c.ahead.b[:n])
	c.ahead.r = k
	return k, nil
}

// ReadFull reads exactly len(p) bytes into p.
func (c *Conn) ReadFull(p []byte) error {
	for off := 0; off < len(p); {
		n, err := c.Read(p[off:])
		off += n
		if err != nil {
			if err == io.EOF && off > 0 {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

func (c *Conn) writeOnce(fd uintptr) bool {
	n, err := c.writeNoWait(fd, c.wvecs)
	if err == unix.EAGAIN {
		c.ctr.sendEAGAIN.Add(1)
		return false
	}
	c.ctr.sendCalls.Add(1)
	if err == unix.EINTR {
		return false
	}
	c.wn, c.werr = n, err
	return true
}

// Writev writes all of bufs, as few system calls as the socket allows: one
// writev(2) with every buffer, repeated on what is left after a short write.
// bufs is read before the first system call and never after, nor changed:
// Writev works on a copy. So a caller may reuse bufs (and a request whose
// reply arrives before Writev returns may be sent again at once).
func (c *Conn) Writev(bufs [][]byte) error {
	c.wv = append(c.wv[:0], bufs...)
	defer clear(c.wv) // hold no buffer after the call
	bufs = c.wv
	for len(bufs) > 0 {
		// Drop empty leading buffers.
		if len(bufs[0]) == 0 {
			bufs = bufs[1:]
			continue
		}
		c.wvecs, c.wn, c.werr = bufs, 0, nil
		err := c.raw.Write(c.wfn)
		c.wvecs = nil
		if err != nil || c.werr != nil {
			return rawErr("write", "writev", err, c.werr)
		}
		c.ctr.sendBytes.Add(uint64(c.wn))
		n := c.wn
		for n > 0 && len(bufs) > 0 {
			if n >= len(bufs[0]) {
				n -= len(bufs[0])
				bufs = bufs[1:]
			} else {
				bufs[0] = bufs[0][n:]
				n = 0
			}
		}
	}
	return nil
}

// tryWriteOnce is writeOnce that never lets the poller wait: EAGAIN (and
// EINTR) come back as nothing written.
func (c *Conn) tryWriteOnce(fd uintptr) bool {
	n, err := unix.Write(int(fd), c.tp)
	if err == unix.EAGAIN {
		c.ctr.sendEAGAIN.Add(1)
		n, err = 0, nil
	} else {
		c.ctr.sendCalls.Add(1)
		if err == unix.EINTR {
			n, err = 0, nil
		}
	}
	c.wn, c.werr = n, err
	return true
}

// TryWrite makes one write(2) of p and returns what the socket took, 0 when
// it was full: it never waits. It is for a goroutine that must not block on
// a peer (a client's reader, whose peer may be waiting for it to read).
// The one-writer rule of Writev applies.
func (c *Conn) TryWrite(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.tp, c.wn, c.werr = p, 0, nil
	err := c.raw.Write(c.tfn)
	c.tp = nil
	if err != nil || c.werr != nil {
		return 0, rawErr("write", "write", err, c.werr)
	}
	c.ctr.sendBytes.Add(uint64(c.wn))
	return c.wn, nil
}

// Write writes all of p.
func (c *Conn) Write(p []byte) (int, error) {
	var one [1][]byte
	one[0] = p
	if err := c.Writev(one[:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// rawErr is how a raw read or write of op failed (the callers check that
// one of the two is set, so that the path of a call that worked stays
// inline): err is the RawConn's own (a closed connection, a deadline),
// else callErr is the errno of the system call named call, which the
// RawConn's callback kept.
func rawErr(op, call string, err, callErr error) error {
	if err != nil {
		return wrapNetErr(op, err)
	}
	return wrapNetErr(op, os.NewSyscallError(call, callErr))
}

func wrapNetErr(op string, err error) error {
	if errors.Is(err, net.ErrClosed) {
		return net.ErrClosed
	}
	return fmt.Errorf("nbd: %s: %w", op, err)
}

// SockBuf names SO_SNDBUF or SO_RCVBUF.
type SockBuf int

const (
	SendBuf SockBuf = unix.SO_SNDBUF
	RecvBuf SockBuf = unix.SO_RCVBUF
)

func (b SockBuf) String() string {
	if b == SendBuf {
		return "SO_SNDBUF"
	}
	return "SO_RCVBUF"
}

// SetBuffer sets SO_SNDBUF or SO_RCVBUF on the live socket and returns the
// effective value the kernel reports afterwards (Linux doubles the request
// and clamps it to net.core.wmem_max/rmem_max).
func (c *Conn) SetBuffer(which SockBuf, size int) (effective int, err error) {
	eff, err := SetSocketBuffer(c.raw, which, size)
	if err == nil {
		c.locked.Or(lockBit(which))
	}
	return eff, err
}

// BufferLocked reports whether the buffer was set on this socket, which on
// Linux locks it for good: a TCP socket then keeps that size instead of
// autotuning, and only a new socket gets the OS default back.
func (c *Conn) BufferLocked(which SockBuf) bool { return c.locked.Load()&lockBit(which) != 0 }

func lockBit(which SockBuf) uint32 {
	if which == SendBuf {
		return 1
	}
	return 2
}

// TCP reports whether the socket is a TCP one (else it is a unix socket).
func (c *Conn) TCP() bool {
	_, ok := c.nc.(*net.TCPConn)
	return ok
}

// Buffer reads SO_SNDBUF or SO_RCVBUF back from the kernel.
func (c *Conn) Buffer(which SockBuf) (int, error) {
	return GetSocketBuffer(c.raw, which)
}

// SetSocketBuffer sets a socket buffer through a RawConn and reads it back.
func SetSocketBuffer(raw syscall.RawConn, which SockBuf, size int) (int, error) {
	var serr error
	err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, int(which), size)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, fmt.Errorf("nbd: setsockopt %s=%d: %w", which, size, err)
	}
	return GetSocketBuffer(raw, which)
}

// GetSocketBuffer reads SO_SNDBUF or SO_RCVBUF through a RawConn.
func GetSocketBuffer(raw syscall.RawConn, which SockBuf) (int, error) {
	var v int
	var gerr error
	err := raw.Control(func(fd uintptr) {
		v, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, int(which))
	})
	if err == nil {
		err = gerr
	}
	if err != nil {
		return 0, fmt.Errorf("nbd: getsockopt %s: %w", which, err)
	}
	return v, nil
}
