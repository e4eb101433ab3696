package nbd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// CloseTimeout bounds how long Close waits for requests in flight.
var CloseTimeout = 10 * time.Second

// ErrClientClosed is returned for requests on a closed client.
var ErrClientClosed = errors.New("nbd: client closed")

// Client is one NBD connection in the transmission phase. Many requests may
// be in flight at once from many goroutines; replies are matched by cookie
// and READ data lands straight in the caller's buffer.
type Client struct {
	c    *Conn
	info ExportInfo

	wmu sync.Mutex // one writer: each request goes out whole
	// alignMin is the WRITE payload size from which the payload starts a
	// writev of its own (alignedPayloadMin on a unix socket, else 0: off).
	alignMin int
	mu       sync.Mutex
	ops      map[uint64]*Op
	next     uint64
	err      error      // terminal error; set once
	idle     *sync.Cond // signalled when ops empties or err is set
	busy     *sync.Cond // signalled when a request is added or err is set
	parked   bool       // the reader waits on busy (awaitRequest)
	dead     chan struct{}
	rdon     chan struct{} // reader goroutine finished

	// scratch holds the small fixed parts of replies (chunk offsets); only
	// the reader goroutine uses it. A field rather than a local, so reading
	// into it does not allocate.
	scratch [16]byte
}

// Op is one request. An Op can be reused once Wait has returned; reusing
// Ops keeps the steady state free of allocations.
type Op struct {
	Cmd    uint16
	Flags  uint16
	Offset uint64
	Length uint32 // for READ and WRITE, len(Buf) is used
	Buf    []byte // READ destination or WRITE data

	Extents []Extent // BLOCK_STATUS result

	// Done, when set, is called on the client's reader goroutine as soon
	// as the reply is complete (or the connection has failed), instead of
	// waking Wait, which must then not be used; Err has the outcome. It
	// saves a goroutine wake-up per request: a load generator can send
	// the next request from Done. Done must not block, since no reply is
	// read until it returns: it may send only with TryStart (Start could
	// wait for a server that waits for us). It must not send anything
	// once Close has been called.
	Done func(*Op)

	err     error
	covered uint64
	done    chan struct{}
	hdr     [requestSize]byte
	vecs    [2][]byte
}

// NewOp returns a reusable request.
func NewOp() *Op { return &Op{done: make(chan struct{}, 1)} }

// Err is the outcome of a completed request (in Done, or after Wait): an
// Errno from the server, or a connection error.
func (op *Op) Err() error { return op.err }

// signal reports op complete to Done or Wait.
func (op *Op) signal() {
	if op.Done != nil {
		op.Done(op)
		return
	}
	op.done <- struct{}{}
}

// Wait blocks until the reply arrived (or the connection failed) and returns
// the request's error: an Errno from the server, or a connection error.
func (op *Op) Wait() error {
	<-op.done
	return op.err
}

func newClient(c *Conn, info ExportInfo) *Client {
	cl := &Client{c: c, info: info, ops: make(map[uint64]*Op), dead: make(chan struct{}), rdon: make(chan struct{})}
	cl.idle = sync.NewCond(&cl.mu)
	cl.busy = sync.NewCond(&cl.mu)
	if _, onUnix := c.nc.(*net.UnixConn); onUnix {
		cl.alignMin = alignedPayloadMin
	}
	go cl.reader()
	return cl
}

// Info is what the handshake negotiated.
func (cl *Client) Info() ExportInfo { return cl.info }

// Size is the export size.
func (cl *Client) Size() int64 { return int64(cl.info.Size) }

// Conn is the instrumented data socket (counters, buffers).
func (cl *Client) Conn() *Conn { return cl.c }

// Err returns the terminal error, or nil while the client works.
func (cl *Client) Err() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.err
}

// Start sends op; its completion is reported by op.Wait. It waits for the
// socket as long as it takes, so it must not be called on the reader
// goroutine (from Done): use TryStart there.
func (cl *Client) Start(op *Op) error {
	if _, err := cl.register(op); err != nil {
		return err
	}
	vecs := op.vecs[:1]
	if op.Cmd == CmdWrite {
		op.vecs[1] = op.Buf
		vecs = op.vecs[:2]
	}
	cmd := op.Cmd
	hdr, payload := requestCalls(vecs, cl.alignMin)
	cl.wmu.Lock()
	err := cl.c.Writev(hdr)
	if err == nil && len(payload) > 0 {
		err = cl.c.Writev(payload)
	}
	cl.wmu.Unlock()
	// From here on op is not touched: its reply may already have arrived
	// and a Done may be sending it again.
	if err != nil {
		cl.fail(fmt.Errorf("nbd: sending %s: %w", CmdName(cmd), err))
		// fail completed op (it was registered) unless the reader
		// already did; either way Wait returns an error.
	}
	return nil
}

// requestCalls splits a request (header, and a WRITE's payload) into the
// calls that send it: all in one writev, but on a unix socket
// (alignMin > 0) a payload of alignMin bytes or more in a call of its
// own, after the header's. The kernel puts each send call's bytes in
// fresh, cache-line-aligned buffers; behind the 28-byte request header
// every payload byte sat 28 bytes off the alignment it has in our buffer
// and in the server's, and both copies (ours into the socket, the
// server's out of it) ran askew, as the server's replies did
// (alignedPayloadMin). With the call of its own the pair in write mode
// made 0.83-0.96x of the copy loop at 2m against 0.64-0.76x, and
// 0.79-0.87x at the default against 0.70-0.77x (bench/README, "Writes").
func requestCalls(vecs [][]byte, alignMin int) (first, second [][]byte) {
	if alignMin > 0 && len(vecs) == 2 && len(vecs[1]) >= alignMin {
		return vecs[:1], vecs[1:]
	}
	return vecs, nil
}

// TryStart sends op, a request without payload (not a WRITE), only if that
// needs no wait: no other request is being sent and the socket takes the
// header at once. Otherwise it sends nothing and reports false, and the
// caller sends op with Start from a goroutine that may wait.
//
// It is the way to send from Done, on the reader goroutine. That goroutine
// must never wait for the socket, nor for the lock of a sender that waits
// for it: the server may have stopped reading requests until we read its
// replies (its in-flight cap), and a sender blocked in writev would then
// wait for the reader, which waits for the sender.
func (cl *Client) TryStart(op *Op) (bool, error) {
	if op.Cmd == CmdWrite || !cl.wmu.TryLock() {
		return false, nil
	}
	cookie, err := cl.register(op)
	if err != nil {
		cl.wmu.Unlock()
		return false, err
	}
	cmd := op.Cmd
	n, err := cl.c.TryWrite(op.hdr[:])
	switch {
	case err != nil:
		cl.wmu.Unlock()
		cl.fail(fmt.Errorf("nbd: sending %s: %w", CmdName(cmd), err))
		return true, nil // completed with the error by the reader, as in Start
	case n == 0:
		cl.wmu.Unlock()
		cl.mu.Lock()
		mine := cl.ops[cookie] == op
		if mine {
			delete(cl.ops, cookie)
			if len(cl.ops) == 0 {
				cl.idle.Broadcast()
			}
		}
		cl.mu.Unlock()
		// Not mine: the connection failed meanwhile and op is (being)
		// completed with that error; it counts as sent.
		return !mine, nil
	case n < len(op.hdr):
		// Part of the header went out: the rest must follow before any
		// other request. A goroutine of its own finishes it, holding wmu
		// (rare: a 32-byte write split by a full socket).
		go cl.sendRest(op.hdr[n:], cmd)
		return true, nil
	}
	cl.wmu.Unlock()
	return true, nil
}

// sendRest writes the rest of a request TryStart began and releases wmu.
func (cl *Client) sendRest(rest []byte, cmd uint16) {
	_, err := cl.c.Write(rest)
	cl.wmu.Unlock()
	if err != nil {
		cl.fail(fmt.Errorf("nbd: sending %s: %w", CmdName(cmd), err))
	}
}

// register prepares op's header and enters it among the requests in
// flight, under a new cookie.
func (cl *Client) register(op *Op) (uint64, error) {
	if op.done == nil {
		op.done = make(chan struct{}, 1)
	}
	switch op.Cmd {
	case CmdRead, CmdWrite:
		op.Length = uint32(len(op.Buf))
	}
	op.err = nil
	op.covered = 0
	op.Extents = op.Extents[:0]

	cl.mu.Lock()
	if cl.err != nil {
		err := cl.err
		cl.mu.Unlock()
		return 0, err
	}
	cl.next++
	cookie := cl.next
	cl.ops[cookie] = op
	if len(cl.ops) == 1 {
		cl.busy.Signal()
	}
	cl.mu.Unlock()

	Request{Flags: op.Flags, Type: op.Cmd, Cookie: cookie, Offset: op.Offset, Length: op.Length}.Put(op.hdr[:])
	op.vecs[0] = op.hdr[:]
	return cookie, nil
}

// Do sends op and waits for its reply.
func (cl *Client) Do(op *Op) error {
	if err := cl.Start(op); err != nil {
		return err
	}
	return op.Wait()
}

// ReadAt reads len(p) bytes at off.
func (cl *Client) ReadAt(p []byte, off int64) (int, error) { return cl.transfer(CmdRead, p, off) }

// WriteAt writes p at off.
func (cl *Client) WriteAt(p []byte, off int64) (int, error) { return cl.transfer(CmdWrite, p, off) }

// transfer moves p at off with cmd (READ or WRITE) and waits for it: all
// of p, or an error.
func (cl *Client) transfer(cmd uint16, p []byte, off int64) (int, error) {
	op := NewOp()
	op.Cmd, op.Offset, op.Buf = cmd, uint64(off), p
	if err := cl.Do(op); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (cl *Client) simple(cmd, flags uint16, off uint64, n uint32) error {
	op := NewOp()
	op.Cmd, op.Flags, op.Offset, op.Length = cmd, flags, off, n
	return cl.Do(op)
}

// Flush asks the server to make completed writes durable.
func (cl *Client) Flush() error { return cl.simple(CmdFlush, 0, 0, 0) }

// Trim discards a range.
func (cl *Client) Trim(off int64, n uint32) error { return cl.simple(CmdTrim, 0, uint64(off), n) }

// WriteZeroes zeroes a range; flags may hold CmdFlagNoHole, CmdFlagFastZero, CmdFlagFUA.
func (cl *Client) WriteZeroes(off int64, n uint32, flags uint16) error {
	return cl.simple(CmdWriteZeroes, flags, uint64(off), n)
}

// BlockStatus returns the base:allocation extents from off (the handshake
// must have asked for BlockStatus).
func (cl *Client) BlockStatus(off int64, n uint32, flags uint16) ([]Extent, error) {
	if !cl.info.HasMeta {
		return nil, errors.New("nbd: base:allocation was not negotiated")
	}
	op := NewOp()
	op.Cmd, op.Flags, op.Offset, op.Length = CmdBlockStatus, flags, uint64(off), n
	if err := cl.Do(op); err != nil {
		return nil, err
	}
	// Some servers (nbdkit null) describe more than was asked; clamp, so
	// callers can sum the lengths.
	left := uint64(n)
	out := op.Extents[:0]
	for _, e := range op.Extents {
		if left == 0 {
			break
		}
		if e.Length > left {
			e.Length = left
		}
		left -= e.Length
		out = append(out, e)
	}
	return out, nil
}

// Close sends DISC after the requests in flight have been answered, then
// closes the socket.
func (cl *Client) Close() error {
	cl.mu.Lock()
	alive := cl.err == nil
	cl.mu.Unlock()
	if alive {
		// Wait for requests in flight; a failing connection completes
		// them with an error and fail() wakes us. A server that stays
		// connected but never answers gets CloseTimeout, then the socket
		// is closed under it.
		t := time.AfterFunc(CloseTimeout, func() {
			cl.fail(fmt.Errorf("nbd: close: requests in flight not answered within %v", CloseTimeout))
		})
		defer t.Stop()
		cl.mu.Lock()
		for len(cl.ops) > 0 && cl.err == nil {
			cl.idle.Wait()
		}
		cl.mu.Unlock()
		var h [requestSize]byte
		Request{Type: CmdDisc}.Put(h[:])
		cl.wmu.Lock()
		cl.c.Write(h[:])
		cl.wmu.Unlock()
	}
	cl.fail(ErrClientClosed)
	cl.c.Close()
	<-cl.rdon
	return nil
}

// fail ends the client with err (the first error wins) and closes the
// socket. It may be called from any goroutine; the reader goroutine, which
// alone touches requests in flight, then completes them all (finish).
func (cl *Client) fail(err error) {
	cl.mu.Lock()
	if cl.err == nil {
		cl.err = err
		cl.idle.Broadcast()
		cl.busy.Broadcast()
		close(cl.dead)
	}
	cl.mu.Unlock()
	cl.c.Close()
}

// finish completes every request in flight with the terminal error. Only
// the reader calls it, after its loop ended, so no reply is being read
// into a request while it is completed.
func (cl *Client) finish() {
	cl.mu.Lock()
	ops, err := cl.ops, cl.err
	cl.ops = map[uint64]*Op{}
	cl.idle.Broadcast()
	cl.mu.Unlock()
	for _, op := range ops {
		op.err = err
		op.signal()
	}
}

func (cl *Client) lookup(cookie uint64, remove bool) *Op {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	op := cl.ops[cookie]
	if op != nil && remove {
		delete(cl.ops, cookie)
	}
	return op
}

func (cl *Client) complete(cookie uint64, op *Op) {
	cl.mu.Lock()
	if cl.ops[cookie] != op {
		cl.mu.Unlock()
		return // fail() got there first
	}
	delete(cl.ops, cookie)
	if len(cl.ops) == 0 {
		cl.idle.Broadcast()
	}
	cl.mu.Unlock()
	op.signal()
}

func (cl *Client) reader() {
	defer close(cl.rdon)
	// qemu's client reads on one thread that sleeps only in ppoll, and
	// the completions (Done) run there too, as qemu's coroutines do:
	// readerThread keeps this goroutine on its thread without waking
	// the runtime (readerthread.go).
	th := readerThread{c: cl.c}
	defer th.release()
	err := cl.readLoop(&th)
	if errors.Is(err, net.ErrClosed) {
		err = ErrClientClosed
	}
	cl.fail(err)
	cl.finish()
	cl.c.closeLoop()
}

func (cl *Client) readLoop(th *readerThread) error {
	var h [chunkHeaderSize]byte
	for {
		if cl.c.polled {
			th.betweenReplies()
			if err := cl.awaitRequest(th); err != nil {
				return err
			}
		}
		if err := cl.c.ReadFull(h[:4]); err != nil {
			return fmt.Errorf("nbd: reading reply: %w", err)
		}
		switch binary.BigEndian.Uint32(h[:4]) {
		case magicSimpleReply:
			if err := cl.c.ReadFull(h[4:simpleReplySize]); err != nil {
				return fmt.Errorf("nbd: reading reply: %w", err)
			}
			if err := cl.simpleReply(h[:simpleReplySize]); err != nil {
				return err
			}
		case magicStructReply:
			if !cl.info.Structured {
				return protoErrorf("structured reply chunk without STRUCTURED_REPLY negotiated")
			}
			if err := cl.c.ReadFull(h[4:chunkHeaderSize]); err != nil {
				return fmt.Errorf("nbd: reading reply: %w", err)
			}
			ch, _ := ParseChunkHeader(h[:])
			if err := cl.chunk(ch); err != nil {
				return err
			}
		default:
			return protoErrorf("reply magic 0x%08x", binary.BigEndian.Uint32(h[:4]))
		}
	}
}

// awaitRequest parks the ppoll reader, where it waits raw (one
// processor: readerthread.go), while no request is in flight: a paused
// load's reader, asleep in ppoll through the runtime, woke sysmon from
// its deep sleep when the first reply after the resume ended the call.
// Parked, it is woken by the next request's register, without a system
// call; a hang-up meanwhile is seen by Lost.
func (cl *Client) awaitRequest(th *readerThread) error {
	if !th.c.rawWait {
		return nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for len(cl.ops) == 0 && cl.err == nil {
		cl.parked = true
		cl.busy.Wait()
	}
	cl.parked = false
	return cl.err
}

// Lost is Err, and, while the reader is parked with nothing in flight
// (awaitRequest), a look whether the server hung up meanwhile, which the
// reader would otherwise see only at the next request.
func (cl *Client) Lost() error {
	cl.mu.Lock()
	parked := cl.parked
	cl.mu.Unlock()
	if parked {
		if err := cl.c.peekHangup(); err != nil {
			cl.fail(fmt.Errorf("nbd: reading reply: %w", err))
		}
	}
	return cl.Err()
}

func (cl *Client) simpleReply(h []byte) error {
	errno := Errno(binary.BigEndian.Uint32(h[4:8]))
	cookie := binary.BigEndian.Uint64(h[8:16])
	op := cl.lookup(cookie, false)
	if op == nil {
		return protoErrorf("reply with unknown cookie %d", cookie)
	}
	if errno != 0 {
		op.err = errno
	} else if op.Cmd == CmdRead {
		if cl.info.Structured {
			return protoErrorf("simple reply to READ after STRUCTURED_REPLY was negotiated")
		}
		if err := cl.c.ReadFull(op.Buf); err != nil {
			return fmt.Errorf("nbd: reading READ data: %w", err)
		}
	} else if op.Cmd == CmdBlockStatus {
		return protoErrorf("simple success reply to BLOCK_STATUS")
	}
	cl.complete(cookie, op)
	return nil
}

// chunk reads one structured reply chunk's payload into its request and
// completes the request at its last chunk.
func (cl *Client) chunk(ch Chunk) error {
	op := cl.lookup(ch.Cookie, false)
	if op == nil {
		return protoErrorf("chunk with unknown cookie %d", ch.Cookie)
	}
	var err error
	switch ch.Type {
	case ChunkOffsetData:
		err = cl.offsetData(op, ch)
	case ChunkOffsetHole:
		err = cl.offsetHole(op, ch)
	case ChunkBlockStatus:
		err = cl.blockStatus(op, ch)
	case ChunkNone:
		if ch.Length != 0 || ch.Flags&ChunkFlagDone == 0 {
			err = protoErrorf("NONE chunk with length %d or without DONE", ch.Length)
		}
	default:
		err = cl.errorChunk(op, ch)
	}
	if err != nil {
		return err
	}
	if ch.Flags&ChunkFlagDone != 0 {
		if op.err == nil && op.Cmd == CmdRead && op.covered != uint64(op.Length) {
			op.err = protoErrorf("READ reply covered %d of %d bytes", op.covered, op.Length)
		}
		if op.err == nil && op.Cmd == CmdBlockStatus && len(op.Extents) == 0 {
			op.err = protoErrorf("BLOCK_STATUS reply without extents")
		}
		cl.complete(ch.Cookie, op)
	}
	return nil
}

// offsetData reads an OFFSET_DATA chunk's data straight into op.Buf.
func (cl *Client) offsetData(op *Op, ch Chunk) error {
	if op.Cmd != CmdRead {
		return protoErrorf("OFFSET_DATA chunk for %s", CmdName(op.Cmd))
	}
	if ch.Length < 9 {
		return protoErrorf("OFFSET_DATA chunk of %d bytes (at least 9)", ch.Length)
	}
	ob := cl.scratch[:8]
	if err := cl.c.ReadFull(ob); err != nil {
		return err
	}
	off := binary.BigEndian.Uint64(ob)
	n := uint64(ch.Length - 8)
	lo, hi, ok := chunkRange(op, off, n)
	if !ok {
		return protoErrorf("OFFSET_DATA chunk [%d,+%d) overruns the request [%d,+%d)", off, n, op.Offset, op.Length)
	}
	if err := cl.c.ReadFull(op.Buf[lo:hi]); err != nil {
		return fmt.Errorf("nbd: reading READ data: %w", err)
	}
	op.covered += n
	return nil
}

// offsetHole zeroes the range of op.Buf an OFFSET_HOLE chunk names.
func (cl *Client) offsetHole(op *Op, ch Chunk) error {
	if op.Cmd != CmdRead || ch.Length != 12 {
		return protoErrorf("malformed OFFSET_HOLE chunk (%d bytes, %s)", ch.Length, CmdName(op.Cmd))
	}
	b := cl.scratch[:12]
	if err := cl.c.ReadFull(b); err != nil {
		return err
	}
	off := binary.BigEndian.Uint64(b)
	n := uint64(binary.BigEndian.Uint32(b[8:]))
	lo, hi, ok := chunkRange(op, off, n)
	if !ok || n == 0 {
		return protoErrorf("OFFSET_HOLE chunk [%d,+%d) overruns the request [%d,+%d)", off, n, op.Offset, op.Length)
	}
	clear(op.Buf[lo:hi])
	op.covered += n
	return nil
}

// blockStatus takes a BLOCK_STATUS chunk's extents into op.
func (cl *Client) blockStatus(op *Op, ch Chunk) error {
	if op.Cmd != CmdBlockStatus || ch.Length > 4+8*1<<20 {
		return protoErrorf("unexpected BLOCK_STATUS chunk (%d bytes, %s)", ch.Length, CmdName(op.Cmd))
	}
	p := make([]byte, ch.Length)
	if err := cl.c.ReadFull(p); err != nil {
		return err
	}
	id, exts, err := ParseBlockStatus(p)
	if err != nil {
		return err
	}
	// One context is negotiated, so exactly one chunk may come, and
	// for that context; more would let a server grow Extents without end.
	if cl.info.HasMeta && id != cl.info.MetaID {
		return protoErrorf("BLOCK_STATUS chunk for context %d, negotiated %d", id, cl.info.MetaID)
	}
	if len(op.Extents) > 0 {
		return protoErrorf("second BLOCK_STATUS chunk for one request")
	}
	op.Extents = append(op.Extents, exts...)
	return nil
}

// errorChunk takes an error chunk (or fails on an unknown non-error
// type): the request's first error is kept.
func (cl *Client) errorChunk(op *Op, ch Chunk) error {
	if ch.Type&0x8000 == 0 {
		return protoErrorf("unknown chunk type %d", ch.Type)
	}
	if ch.Length > maxOptionLength {
		return protoErrorf("error chunk of %d bytes", ch.Length)
	}
	p := make([]byte, ch.Length)
	if err := cl.c.ReadFull(p); err != nil {
		return err
	}
	ec, err := ParseErrorChunk(ch.Type, p)
	if err != nil && ch.Type != ChunkError && ch.Type != ChunkErrorOffset {
		// Unknown error types still carry errno and message first.
		ec.Errno = EIO
	} else if err != nil {
		return err
	}
	if op.err == nil {
		op.err = ec.Errno
		if ec.Message != "" {
			op.err = &ServerError{Errno: ec.Errno, Message: ec.Message}
		}
	}
	return nil
}

// chunkRange maps a chunk's [off, off+n) into op.Buf.
func chunkRange(op *Op, off, n uint64) (lo, hi uint64, ok bool) {
	if off < op.Offset || off+n < off || off+n > op.Offset+uint64(op.Length) {
		return 0, 0, false
	}
	lo = off - op.Offset
	return lo, lo + n, true
}

// ServerError is an error chunk that carried a message.
type ServerError struct {
	Errno   Errno
	Message string
}

func (e *ServerError) Error() string { return e.Errno.Error() + ": " + e.Message }

// Unwrap lets errors.Is(err, nbd.EIO) work.
func (e *ServerError) Unwrap() error { return e.Errno }
