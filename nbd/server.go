package nbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Export is one named disk served by a Server.
type Export struct {
	Name        string
	Description string
	Backend     Backend
	ReadOnly    bool
}

// Default limits of a Server; each can be changed on the Server before Serve.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultMaxConns         = 256
	// DefaultMaxInFlightBytes bounds the payload memory one connection can
	// make the server hold at once (64 requests of 2 MiB plus headroom);
	// a client that pipelines more simply waits.
	DefaultMaxInFlightBytes = 192 << 20
	maxWorkersPerConn       = 64
	maxExtentsPerReply      = 1024
)

// Viewer is implemented by backends that can hand out data without copying
// it (the null backend's fill). View returns length bytes at off as a slice
// the caller only reads and that stays unchanged for as long as it is held
// (the server writes it straight to the socket), or false, and the server
// falls back to ReadAt into a buffer of its own.
type Viewer interface {
	View(off int64, length int) ([]byte, bool)
}

// Server serves exports over the NBD fixed-newstyle protocol. Its zero value
// is not usable: fill Exports (the first one also answers the empty name).
type Server struct {
	Exports          []Export
	HandshakeTimeout time.Duration // 0 → DefaultHandshakeTimeout
	MaxConns         int           // 0 → DefaultMaxConns
	MaxInFlightBytes int64         // 0 → DefaultMaxInFlightBytes
	// Logf, when set, receives one line per notable event (protocol
	// errors, and the refusals when Warnf is nil). It must be safe for
	// concurrent use.
	Logf func(format string, args ...any)
	// Warnf, when set, receives what must be seen even when Logf is not
	// set: connections refused at MaxConns, at most a line a second (the
	// first at once, then a count). Nil: they go to Logf.
	Warnf func(format string, args ...any)
	// OnConnClose, when set, receives each connection's final figures as
	// it ends (after its socket is closed), so a live report can give a
	// connection that ended between two reports its last line.
	OnConnClose func(ConnInfo)

	mu       sync.Mutex
	conns    map[*serverConn]struct{}
	closed   IOStats // counters of connections already gone
	closedPL Payload // payload of connections already gone
	accepted uint64
	refused  uint64 // connections refused at MaxConns
	refusals refusalLog
	sndbuf   int // requested SO_SNDBUF for data sockets; 0 = OS default
	rcvbuf   int
	defSnd   int // effective SO_SNDBUF of a fresh socket, read at first accept
	defRcv   int
	wg       sync.WaitGroup
}

// ServerStats is a snapshot of a server's activity.
type ServerStats struct {
	IO       IOStats // all data sockets, open and closed
	Payload  Payload // READ and WRITE data, open and closed connections
	Open     int     // connections in transmission or handshake
	Accepted uint64
	Refused  uint64 // connections closed at once: MaxConns were open
}

// Payload is the data a server moved at the protocol level: READ data
// sent and WRITE data received, without headers. It is the "payload" of
// every per-2-MiB figure, the same amount a client counts as copied.
type Payload struct {
	ReadBytes  uint64
	WriteBytes uint64
}

// Add returns the field-wise sum.
func (p Payload) Add(o Payload) Payload {
	return Payload{ReadBytes: p.ReadBytes + o.ReadBytes, WriteBytes: p.WriteBytes + o.WriteBytes}
}

// Sub returns p - o (for deltas between snapshots).
func (p Payload) Sub(o Payload) Payload {
	return Payload{ReadBytes: p.ReadBytes - o.ReadBytes, WriteBytes: p.WriteBytes - o.WriteBytes}
}

// Total is READ plus WRITE data.
func (p Payload) Total() uint64 { return p.ReadBytes + p.WriteBytes }

// ConnInfo describes one open connection.
type ConnInfo struct {
	ID     uint64    // 1 for the first connection accepted, 2 for the next …
	Since  time.Time // when it was accepted
	Remote string
	Export string
	IO     IOStats
	// Payload is the READ and WRITE data moved (not headers).
	Payload Payload
	SndBuf  int // effective, as getsockopt reports it
	RcvBuf  int
	// SndBufLocked and RcvBufLocked: the buffer was set on this socket
	// (Conn.BufferLocked); on TCP it no longer autotunes.
	SndBufLocked, RcvBufLocked bool
	Structed                   bool
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

func (s *Server) warnf(format string, args ...any) {
	if s.Warnf != nil {
		s.Warnf(format, args...)
		return
	}
	s.logf(format, args...)
}

// ListenAndServe listens on network ("unix" or "tcp") and address and serves
// until ctx is cancelled. A unix socket file it created is removed on return.
func ListenAndServe(ctx context.Context, network, address string, s *Server) error {
	ln, err := net.Listen(network, address)
	if err != nil {
		return err
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(true)
	}
	return s.Serve(ctx, ln)
}

// Serve accepts connections on ln until ctx is cancelled, then closes ln and
// every open connection and waits for their goroutines. It returns nil after
// a cancellation and the accept error otherwise.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if len(s.Exports) == 0 {
		ln.Close()
		return errors.New("nbd: server has no exports")
	}
	s.mu.Lock()
	if s.conns == nil {
		s.conns = make(map[*serverConn]struct{})
	}
	s.mu.Unlock()

	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()

	var err error
	for {
		var nc net.Conn
		nc, err = ln.Accept()
		if err != nil {
			var ne net.Error
			if ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			break
		}
		s.startConn(ctx, nc)
	}
	ln.Close()
	s.closeAll()
	s.wg.Wait()
	s.refusals.flush(s) // the refusals of the last second, said before Serve returns
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (s *Server) startConn(ctx context.Context, nc net.Conn) {
	c, err := NewConn(nc)
	if err != nil {
		s.logf("refusing %s: %v", nc.RemoteAddr(), err)
		nc.Close()
		return
	}
	max := s.MaxConns
	if max <= 0 {
		max = DefaultMaxConns
	}
	_, onUnix := nc.(*net.UnixConn)
	sc := &serverConn{srv: s, c: c, alignPayloads: onUnix}
	s.mu.Lock()
	sc.id, sc.since = s.accepted+1, time.Now()
	if len(s.conns) >= max {
		s.refused++
		s.mu.Unlock()
		nc.Close()
		s.refusals.refused(s, max)
		return
	}
	s.accepted++
	if s.defSnd == 0 {
		s.defSnd, _ = c.Buffer(SendBuf)
		s.defRcv, _ = c.Buffer(RecvBuf)
	}
	if s.sndbuf > 0 {
		if _, err := c.SetBuffer(SendBuf, s.sndbuf); err != nil {
			s.logf("%v", err)
		}
	}
	if s.rcvbuf > 0 {
		if _, err := c.SetBuffer(RecvBuf, s.rcvbuf); err != nil {
			s.logf("%v", err)
		}
	}
	s.conns[sc] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()

	go func() {
		defer s.wg.Done()
		sc.serve(ctx)
		c.Close()
		s.mu.Lock()
		delete(s.conns, sc)
		s.closed = s.closed.Add(c.Stats())
		s.closedPL = s.closedPL.Add(sc.payload())
		s.mu.Unlock()
		if s.OnConnClose != nil {
			s.OnConnClose(sc.info())
		}
	}()
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc := range s.conns {
		sc.c.Close()
	}
}

// Stats returns the counters of every data socket this server has had.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStats{IO: s.closed, Payload: s.closedPL, Open: len(s.conns), Accepted: s.accepted, Refused: s.refused}
	for sc := range s.conns {
		st.IO = st.IO.Add(sc.c.Stats())
		st.Payload = st.Payload.Add(sc.payload())
	}
	return st
}

// Conns describes the open connections.
func (s *Server) Conns() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ConnInfo, 0, len(s.conns))
	for sc := range s.conns {
		out = append(out, sc.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// info describes the connection; its buffers read 0 once it is closed.
func (sc *serverConn) info() ConnInfo {
	ci := ConnInfo{ID: sc.id, Since: sc.since, Remote: sc.c.nc.RemoteAddr().String(), IO: sc.c.Stats(), Payload: sc.payload(), Structed: sc.sr}
	if sc.exp != nil {
		ci.Export = sc.exp.Name
	}
	ci.SndBuf, _ = sc.c.Buffer(SendBuf)
	ci.RcvBuf, _ = sc.c.Buffer(RecvBuf)
	ci.SndBufLocked, ci.RcvBufLocked = sc.c.BufferLocked(SendBuf), sc.c.BufferLocked(RecvBuf)
	return ci
}

func (sc *serverConn) payload() Payload {
	return Payload{ReadBytes: sc.readPL.Load(), WriteBytes: sc.writePL.Load()}
}

// SetSocketBuffer changes SO_SNDBUF or SO_RCVBUF of every open data socket
// and of those accepted later, and returns the effective values of the
// open sockets it set.
//
// size 0 means the OS default: sockets accepted later are left untouched.
// An open unix socket gets the value a fresh socket had set back, which is
// all its default is. An open TCP socket whose buffer was set cannot get
// its default back: Linux locked the buffer when it was set and stopped
// autotuning it, and setting any value keeps it locked. Such sockets are
// left as they are (LockedTCP counts them); only re-opening the connection
// (the client's to do) gives a default, autotuned buffer again.
func (s *Server) SetSocketBuffer(which SockBuf, size int) (effs []int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := size
	if which == SendBuf {
		s.sndbuf = size
		if size == 0 {
			req = RequestForEffective(s.defSnd)
		}
	} else {
		s.rcvbuf = size
		if size == 0 {
			req = RequestForEffective(s.defRcv)
		}
	}
	for sc := range s.conns {
		if size == 0 && sc.c.TCP() {
			continue
		}
		if req == 0 {
			continue // no socket seen yet, nothing to restore
		}
		eff, serr := sc.c.SetBuffer(which, req)
		if serr != nil {
			if err == nil && !errors.Is(serr, net.ErrClosed) {
				err = serr
			}
			continue
		}
		effs = append(effs, eff)
	}
	return effs, err
}

// LockedTCP is the number of open TCP data sockets whose buffer was set
// (locked, no autotuning): those that only a new connection returns to the
// OS default.
func (s *Server) LockedTCP(which SockBuf) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sc := range s.conns {
		if sc.c.TCP() && sc.c.BufferLocked(which) {
			n++
		}
	}
	return n
}

// serverConn is one client connection.
type serverConn struct {
	srv   *Server
	c     *Conn
	id    uint64
	since time.Time

	// payload moved: READ data sent (counted when its reply is written
	// whole) and WRITE data received
	readPL, writePL atomic.Uint64

	// negotiated in the handshake
	exp       *Export
	viewer    Viewer // exp.Backend as a Viewer, or nil
	sr        bool
	metaID    uint32 // nonzero when base:allocation was selected
	noZeroes  bool
	tflags    uint16
	fastZero  bool
	transmits bool

	// One writer goroutine per connection sends every reply, each whole,
	// gathering the replies that are ready into one writev. Requests reach
	// it through replies; inflight counts jobs until their reply is sent.
	replies chan *job
	wdone   chan struct{} // the writer has ended
	wmu     sync.Mutex    // guards werr
	werr    error         // first write error; after it the connection is dead
	jobs    chan *job     // to the workers
	// alignPayloads starts each large payload at a writev of its own
	// (alignedPayloadMin): true on unix sockets, where that places it at
	// the start of the kernel's buffers.
	alignPayloads bool
	workers       int
	idle          atomic.Int32
	inflight      sync.WaitGroup

	memMu   sync.Mutex
	memCond *sync.Cond
	memUsed int64
	memMax  int64

	bufs connBufs // its payload buffers (WRITE data, READ replies), unmapped when it ends
}

// job is one request on its way through a worker and the writer. Jobs are
// recycled by the writer once their reply is sent.
type job struct {
	req  Request
	buf  *[]byte  // payload (WRITE data or READ destination)
	pbuf *connBuf // the connection's buffer buf points into, if any
	mem  int64    // payload bytes counted by acquireMem, released when done
	hdr  [32]byte
	vecs [2][]byte // the reply: header, payload
	nvec int
	ext  []byte // BLOCK_STATUS payload scratch
}

// Limits of the writer: replies queued for it (beyond them the reader
// waits, so a client that does not read its replies cannot make us queue
// without bound) and replies gathered into one writev: 4 replies are at
// most 8 iovecs, which unix.Writev converts on the stack (more would
// allocate on every call), and 4 replies of 2 MiB are more than any
// socket buffer holds.
const (
	maxQueuedReplies   = 256
	maxRepliesPerWrite = 4
)

// alignedPayloadMin is the payload size from which, on a unix socket, a
// reply's payload is the first buffer of a writev rather than following
// its header (and the replies before it) in the same one. A unix stream
// socket puts each send call's bytes in fresh kernel buffers, cache-line
// aligned, and copies them out in order: after a 28-byte header (16 for a
// simple reply) every byte of the payload sits 28 bytes off the alignment
// it has in the server's buffer and will have in the client's, and both
// copies, the writev into the socket and the read out of it, ran that
// much askew. On the 2-core EPYC of issue 36 the bare copy loop with a
// 28-byte header in front of each 2 MiB write was 0.69-0.80x of the same
// loop without one, at 2m (bench/README, "The pair against the copy loop
// at 2m"). The header rides at the end of the call before, so a batch of
// n such replies costs n+1 calls where it cost one, and below this size
// the calls cost more than the misaligned copy: the pair at 64 KiB
// requests was 0.52-0.85x of gathered, at 128 KiB 0.85-1.13x, at 256 KiB
// 1.04-1.10x, at 1 MiB 1.01-1.23x (three rounds each, at 2m).
const alignedPayloadMin = 256 << 10

var jobPool = sync.Pool{New: func() any { return new(job) }}

func (sc *serverConn) serve(ctx context.Context) {
	// The writer starts with the connection, so a connection's goroutines
	// are all there once it is accepted (leak checks count them).
	sc.replies = make(chan *job, maxQueuedReplies)
	sc.wdone = make(chan struct{})
	go sc.writer()
	defer func() {
		close(sc.replies)
		<-sc.wdone
	}()
	to := sc.srv.HandshakeTimeout
	if to <= 0 {
		to = DefaultHandshakeTimeout
	}
	nc := sc.c.nc
	nc.SetDeadline(time.Now().Add(to))
	err := sc.handshake(ctx)
	if err != nil {
		if !isQuietClose(err) {
			sc.srv.logf("handshake with %s: %v", nc.RemoteAddr(), err)
		}
		return
	}
	nc.SetDeadline(time.Time{})
	sc.transmission(ctx)
}

// isQuietClose tells errors that are a peer simply going away.
func isQuietClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, errAborted)
}

func (sc *serverConn) acquireMem(n int64) {
	sc.memMu.Lock()
	for sc.memUsed > 0 && sc.memUsed+n > sc.memMax {
		sc.memCond.Wait()
	}
	sc.memUsed += n
	sc.memMu.Unlock()
}

func (sc *serverConn) releaseMem(n int64) {
	sc.memMu.Lock()
	sc.memUsed -= n
	sc.memMu.Unlock()
	sc.memCond.Broadcast()
}

func (sc *serverConn) transmission(ctx context.Context) {
	sc.memMax = sc.srv.MaxInFlightBytes
	if sc.memMax <= 0 {
		sc.memMax = DefaultMaxInFlightBytes
	}
	sc.memCond = sync.NewCond(&sc.memMu)
	sc.viewer, _ = sc.exp.Backend.(Viewer)
	sc.jobs = make(chan *job, maxWorkersPerConn)
	defer func() {
		// Every request read gets its reply (or the socket failed)
		// before serve stops the writer and the connection is closed.
		sc.inflight.Wait()
		close(sc.jobs)
		sc.bufs.release() // every job is done: its memory goes back now
	}()

	var hdr [requestSize]byte
	for {
		if err := sc.c.ReadFull(hdr[:]); err != nil {
			if !isQuietClose(err) {
				sc.srv.logf("%s: reading request: %v", sc.c.nc.RemoteAddr(), err)
			}
			return
		}
		req, err := ParseRequest(hdr[:])
		if err != nil {
			// A bad magic means we have lost the framing: nothing after it
			// can be trusted, so the only safe answer is to hang up.
			sc.srv.logf("%s: %v; closing", sc.c.nc.RemoteAddr(), err)
			return
		}
		if req.Type == CmdDisc {
			return
		}
		if !sc.handleRequest(req) {
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// handleRequest reads any payload, checks the request and hands it to a
// worker. It returns false when the connection must end.
func (sc *serverConn) handleRequest(req Request) bool {
	errno := sc.check(&req)
	if req.Type == CmdWrite {
		if req.Length > MaxPayload {
			return sc.refuseOversizeWrite(req)
		}
		if errno != 0 {
			// Drain the payload (at most MaxPayload), so the next
			// header is found.
			if err := sc.drain(int64(req.Length)); err != nil {
				return false
			}
			return sc.replyNow(req, errno)
		}
		sc.acquireMem(int64(req.Length))
		j := sc.newJob(req)
		j.mem = int64(req.Length)
		j.pbuf = sc.bufs.get(int(req.Length))
		j.buf = &j.pbuf.data
		if err := sc.c.ReadFull(*j.buf); err != nil {
			sc.finish(j)
			if !isQuietClose(err) {
				sc.srv.logf("%s: reading WRITE payload: %v", sc.c.nc.RemoteAddr(), err)
			}
			return false
		}
		sc.writePL.Add(uint64(req.Length))
		sc.dispatch(j)
		return true
	}
	if errno != 0 {
		return sc.replyNow(req, errno)
	}
	if req.Type == CmdRead && req.Length > 0 && sc.viewer != nil {
		// The backend hands out its bytes without a copy or a wait:
		// reply from here, no worker involved.
		if data, ok := sc.viewer.View(int64(req.Offset), int(req.Length)); ok {
			sc.sendRead(sc.newJob(req), data)
			return true
		}
	}
	j := sc.newJob(req)
	if req.Type == CmdRead {
		// The worker takes the buffer; the reader accounts for it, which
		// bounds what a pipelining client can make us hold.
		sc.acquireMem(int64(req.Length))
		j.mem = int64(req.Length)
	}
	sc.dispatch(j)
	return true
}

// refuseOversizeWrite answers a WRITE longer than the maximum the
// handshake advertised (MaxPayload, 32 MiB, as qemu-nbd's) with EINVAL
// and ends the connection, before a byte of its payload is read. Its
// payload cannot be skipped at a bounded cost: a length of 0xFFFFFFFF
// held the connection for 4 GiB of draining (30 s with no answer, issue
// 33), and where the next header starts is the client's word alone.
// qemu-nbd replies EINVAL to such a request and disconnects too.
func (sc *serverConn) refuseOversizeWrite(req Request) bool {
	sc.srv.logf("%s: WRITE of %d bytes is over the %d-byte maximum advertised: EINVAL, and closing without reading its payload",
		sc.c.nc.RemoteAddr(), req.Length, MaxPayload)
	sc.replyNow(req, EINVAL)
	return false
}

// newJob starts a request's way: it counts as in flight until finish.
func (sc *serverConn) newJob(req Request) *job {
	sc.inflight.Add(1)
	j := jobPool.Get().(*job)
	j.req = req
	return j
}

// finish releases what a job holds and recycles it.
func (sc *serverConn) finish(j *job) {
	if j.pbuf != nil {
		sc.bufs.put(j.pbuf)
		j.pbuf, j.buf = nil, nil
	}
	if j.buf != nil {
		putBuf(j.buf)
		j.buf = nil
	}
	if j.mem != 0 {
		sc.releaseMem(j.mem)
		j.mem = 0
	}
	j.vecs = [2][]byte{}
	j.nvec = 0
	jobPool.Put(j)
	sc.inflight.Done()
}

func (sc *serverConn) drain(n int64) error {
	var scratch [64 << 10]byte
	for n > 0 {
		k := int64(len(scratch))
		if n < k {
			k = n
		}
		if err := sc.c.ReadFull(scratch[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// check validates a request against the spec and the export; 0 = fine.
func (sc *serverConn) check(r *Request) Errno {
	size := uint64(sc.exp.Backend.Size())
	end := r.Offset + uint64(r.Length)
	outOfRange := end < r.Offset || end > size
	ro := sc.exp.ReadOnly
	var allowed uint16
	switch r.Type {
	case CmdRead:
		allowed = CmdFlagFUA
		if sc.sr {
			allowed |= CmdFlagDF
		}
	case CmdWrite, CmdFlush, CmdTrim, CmdCache:
		allowed = CmdFlagFUA
	case CmdWriteZeroes:
		allowed = CmdFlagFUA | CmdFlagNoHole
		if sc.fastZero {
			allowed |= CmdFlagFastZero
		}
	case CmdBlockStatus:
		allowed = CmdFlagFUA | CmdFlagReqOne
	default:
		return EINVAL // unknown command
	}
	if r.Flags&^allowed != 0 {
		return EINVAL
	}
	switch r.Type {
	case CmdRead:
		if r.Length > MaxPayload || outOfRange {
			return EINVAL
		}
	case CmdWrite:
		if ro {
			return EPERM
		}
		if outOfRange {
			return ENOSPC
		}
	case CmdWriteZeroes:
		if ro {
			return EPERM
		}
		if outOfRange {
			return ENOSPC
		}
	case CmdTrim:
		if ro {
			return EPERM
		}
		if outOfRange {
			return EINVAL
		}
	case CmdCache:
		if outOfRange {
			return EINVAL
		}
	case CmdBlockStatus:
		if sc.metaID == 0 || r.Length == 0 || outOfRange {
			return EINVAL
		}
	}
	return 0
}

// dispatch hands j to a worker: one that is idle, which it claims, else a
// new one. Each job sent is matched by a claim or a start, so a job never
// waits in the channel behind a busy worker (a backend call that blocks
// cannot hold up requests queued after it) until maxWorkersPerConn are
// busy.
func (sc *serverConn) dispatch(j *job) {
	for {
		n := sc.idle.Load()
		if n == 0 {
			if sc.workers < maxWorkersPerConn {
				sc.workers++
				go sc.worker()
			}
			break
		}
		if sc.idle.CompareAndSwap(n, n-1) {
			break
		}
	}
	sc.jobs <- j
}

func (sc *serverConn) worker() {
	for j := range sc.jobs {
		sc.run(j)      // hands j to the writer
		sc.idle.Add(1) // available: dispatch may claim us
	}
}

// run performs one request and queues its reply; the writer then owns j.
func (sc *serverConn) run(j *job) {
	r := &j.req
	b := sc.exp.Backend
	off := int64(r.Offset)
	n := int64(r.Length)
	fua := r.Flags&CmdFlagFUA != 0
	var err error
	switch r.Type {
	case CmdRead:
		if sc.viewer != nil && n > 0 {
			// No copy: the backend's own bytes go to the socket.
			if data, ok := sc.viewer.View(off, int(n)); ok {
				sc.sendRead(j, data)
				return
			}
		}
		j.pbuf = sc.bufs.get(int(n))
		j.buf = &j.pbuf.data
		if n > 0 {
			_, err = b.ReadAt(*j.buf, off)
		}
		if err == nil {
			sc.sendRead(j, *j.buf)
			return
		}
	case CmdWrite:
		if n > 0 {
			_, err = b.WriteAt(*j.buf, off)
		}
		if err == nil && fua {
			err = b.Sync()
		}
	case CmdFlush:
		err = b.Sync()
	case CmdTrim:
		if t, ok := b.(Trimmer); ok && n > 0 {
			err = t.Trim(off, n)
		}
		if err == nil && fua {
			err = b.Sync()
		}
	case CmdWriteZeroes:
		err = sc.zero(off, n, r.Flags)
		if err == nil && fua {
			err = b.Sync()
		}
	case CmdCache:
		// Nothing to prefetch: every backend here is memory or page cache.
	case CmdBlockStatus:
		if err = sc.sendBlockStatus(j); err == nil {
			return
		}
	}
	sc.reply(j, toErrno(err))
}

func (sc *serverConn) zero(off, n int64, flags uint16) error {
	if n == 0 {
		return nil
	}
	b := sc.exp.Backend
	if z, ok := b.(Zeroer); ok {
		return z.Zero(off, n, flags&CmdFlagNoHole == 0)
	}
	if flags&CmdFlagFastZero != 0 {
		return ENOTSUP
	}
	zeros := getBuf(int(min(n, 1<<20)))
	defer putBuf(zeros)
	clear(*zeros)
	for n > 0 {
		k := min(n, int64(len(*zeros)))
		if _, err := b.WriteAt((*zeros)[:k], off); err != nil {
			return err
		}
		off += k
		n -= k
	}
	return nil
}

// toErrno maps a backend error to the errno the spec assigns.
func toErrno(err error) Errno {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[Errno](err); ok {
		return e
	}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EFBIG):
		return ENOSPC
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EROFS), errors.Is(err, os.ErrPermission):
		return EPERM
	case errors.Is(err, syscall.EINVAL):
		return EINVAL
	}
	return EIO
}

// send queues j's reply (j.vecs[:nvec]) for the writer, which then owns j.
func (sc *serverConn) send(j *job, nvec int) {
	j.nvec = nvec
	sc.replies <- j
}

// writer sends the queued replies: each whole, as many as are ready in one
// writev, then finishes their jobs.
func (sc *serverConn) writer() {
	defer close(sc.wdone)
	batch := make([]*job, 0, maxRepliesPerWrite)
	vecs := make([][]byte, 0, 2*maxRepliesPerWrite)
	for j := range sc.replies {
		batch = append(batch[:0], j)
	gather:
		for len(batch) < maxRepliesPerWrite {
			select {
			case j, ok := <-sc.replies:
				if !ok {
					break gather
				}
				batch = append(batch, j)
			default:
				break gather
			}
		}
		ok := sc.writeBatch(batch, &vecs)
		for i, j := range batch {
			if ok && j.req.Type == CmdRead && j.nvec == 2 {
				sc.readPL.Add(uint64(len(j.vecs[1])))
			}
			sc.finish(j)
			batch[i] = nil
		}
	}
}

// writeBatch sends the replies of batch in order, through writes, with
// vecs as scratch: in one writev, or, where payloads are aligned, in one
// per large payload (see writeCalls). False when the connection is dead.
func (sc *serverConn) writeBatch(batch []*job, vecs *[][]byte) bool {
	alignMin := 0
	if sc.alignPayloads {
		alignMin = alignedPayloadMin
	}
	ok := true
	*vecs = writeCalls(batch, alignMin, (*vecs)[:0], func(call [][]byte) bool {
		ok = ok && sc.write(call)
		return ok
	})
	clear((*vecs)[:cap(*vecs)])
	return ok
}

// writeCalls gathers the replies of batch into writev calls, handing each
// to write in order (and stopping when it returns false): all in one, but
// a payload of alignMin bytes or more (alignMin > 0) starts a call of its
// own, its header ending the call before. It returns vecs, the scratch
// it used.
func writeCalls(batch []*job, alignMin int, vecs [][]byte, write func([][]byte) bool) [][]byte {
	for _, j := range batch {
		v := j.vecs[:j.nvec]
		if alignMin > 0 && len(v) == 2 && len(v[1]) >= alignMin {
			vecs = append(vecs, v[0])
			if !write(vecs) {
				return vecs
			}
			vecs = append(vecs[:0], v[1])
			continue
		}
		vecs = append(vecs, v...)
	}
	if len(vecs) > 0 {
		write(vecs)
	}
	return vecs
}

// write sends vecs whole; false when the connection is dead.
func (sc *serverConn) write(vecs [][]byte) bool {
	sc.wmu.Lock()
	dead := sc.werr != nil
	sc.wmu.Unlock()
	if dead {
		return false
	}
	if err := sc.c.Writev(vecs); err != nil {
		sc.wmu.Lock()
		sc.werr = err
		sc.wmu.Unlock()
		if !isQuietClose(err) {
			sc.srv.logf("%s: writing reply: %v", sc.c.nc.RemoteAddr(), err)
		}
		// The peer will not get a whole reply; end the connection so the
		// reader stops too.
		sc.c.Close()
		return false
	}
	return true
}

// reply sends a payload-less reply: simple for every command, except that an
// error to READ must be a structured ERROR chunk once SR is negotiated.
func (sc *serverConn) reply(j *job, errno Errno) {
	if errno != 0 && sc.sr && j.req.Type == CmdRead {
		putChunkHeader(j.hdr[:], ChunkFlagDone, ChunkError, j.req.Cookie, 6)
		be32(j.hdr[20:], uint32(errno))
		j.hdr[24], j.hdr[25] = 0, 0
		j.vecs[0] = j.hdr[:26]
		sc.send(j, 1)
		return
	}
	putSimpleReply(j.hdr[:], errno, j.req.Cookie)
	j.vecs[0] = j.hdr[:simpleReplySize]
	sc.send(j, 1)
}

// replyNow answers from the reader goroutine (invalid requests).
func (sc *serverConn) replyNow(req Request, errno Errno) bool {
	sc.reply(sc.newJob(req), errno)
	sc.wmu.Lock()
	dead := sc.werr != nil
	sc.wmu.Unlock()
	return !dead
}

// sendRead sends data as the reply to the READ in j: header and payload in
// one writev.
func (sc *serverConn) sendRead(j *job, data []byte) {
	if sc.sr && len(data) == 0 {
		// An OFFSET_DATA chunk must carry at least one byte: answer an
		// empty read with NONE, as qemu-nbd does.
		putChunkHeader(j.hdr[:], ChunkFlagDone, ChunkNone, j.req.Cookie, 0)
		j.vecs[0] = j.hdr[:chunkHeaderSize]
		sc.send(j, 1)
		return
	}
	if sc.sr {
		// One OFFSET_DATA chunk with DONE covers the whole request.
		putChunkHeader(j.hdr[:], ChunkFlagDone, ChunkOffsetData, j.req.Cookie, uint32(8+len(data)))
		be64(j.hdr[20:], j.req.Offset)
		j.vecs[0] = j.hdr[:28]
	} else {
		putSimpleReply(j.hdr[:], 0, j.req.Cookie)
		j.vecs[0] = j.hdr[:simpleReplySize]
	}
	j.vecs[1] = data
	sc.send(j, 2)
}

func (sc *serverConn) sendBlockStatus(j *job) error {
	off := int64(j.req.Offset)
	n := int64(j.req.Length)
	var exts []Extent
	if e, ok := sc.exp.Backend.(Extenter); ok {
		var err error
		if exts, err = e.Extents(off, n); err != nil {
			return err
		}
	}
	if len(exts) == 0 {
		exts = []Extent{{Length: uint64(n), Flags: 0}}
	}
	if j.req.Flags&CmdFlagReqOne != 0 {
		exts = exts[:1]
	}
	if len(exts) > maxExtentsPerReply {
		exts = exts[:maxExtentsPerReply]
	}
	need := 4 + 8*len(exts)
	if cap(j.ext) < need {
		j.ext = make([]byte, need)
	}
	p := j.ext[:need]
	be32(p[0:], sc.metaID)
	q := p[4:]
	remaining := uint64(n)
	cnt := 0
	for _, e := range exts {
		l := e.Length
		if l > remaining {
			l = remaining // never describe more than was asked
		}
		// An extent that stops short of EOF must stay 512-aligned, or
		// libnbd follows up with unaligned requests (nbd-notes §6.7).
		trimmed := false
		if end := uint64(off) + uint64(n) - remaining + l; end < uint64(sc.exp.Backend.Size()) && l%512 != 0 && l > 512 {
			l -= l % 512
			trimmed = true
		}
		if l == 0 {
			break
		}
		be32(q[0:], uint32(l))
		be32(q[4:], e.Flags)
		q = q[8:]
		remaining -= l
		cnt++
		if trimmed {
			// Later extents would start where the trimmed one used to
			// end; a shorter reply is allowed, a shifted one is wrong.
			break
		}
	}
	if cnt == 0 {
		return fmt.Errorf("backend returned no extents")
	}
	p = p[:4+8*cnt]
	putChunkHeader(j.hdr[:], ChunkFlagDone, ChunkBlockStatus, j.req.Cookie, uint32(len(p)))
	j.vecs[0] = j.hdr[:chunkHeaderSize]
	j.vecs[1] = p
	sc.send(j, 2)
	return nil
}
