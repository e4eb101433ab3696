package nbd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hostile and broken peers against the server (issue 6). TestBadPeers in
// server_test.go checks the protocol answers; this file adds, for every case
// of the list, that the server returns to its starting number of goroutines,
// open file descriptors and connections, and keeps serving a well-behaved
// client, plus the cases TestBadPeers does not have.

// rawDialBare is rawDial without a cleanup, so a case can close the
// connection before its leak check.
func rawDialBare(t *testing.T, ts *testServer) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", ts.sock)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	return &rawConn{t, nc}
}

// dataReply reads a structured READ reply of n bytes at off for cookie.
func (r *rawConn) dataReply(cookie, off uint64, n int) []byte {
	r.t.Helper()
	ch, err := ParseChunkHeader(r.read(chunkHeaderSize))
	if err != nil || ch.Cookie != cookie || ch.Flags&ChunkFlagDone == 0 {
		r.t.Fatalf("READ reply for cookie %d: %+v %v", cookie, ch, err)
	}
	if n == 0 {
		if ch.Type != ChunkNone || ch.Length != 0 {
			r.t.Fatalf("empty READ: chunk %+v, want NONE", ch)
		}
		return nil
	}
	if ch.Type != ChunkOffsetData || ch.Length != uint32(8+n) {
		r.t.Fatalf("READ reply chunk %+v, want OFFSET_DATA of %d", ch, 8+n)
	}
	b := r.read(8 + n)
	if got := binary.BigEndian.Uint64(b); got != off {
		r.t.Fatalf("OFFSET_DATA at %d, want %d", got, off)
	}
	return b[8:]
}

// errChunk reads a structured ERROR reply (to a READ) for cookie.
func (r *rawConn) errChunk(cookie uint64) Errno {
	r.t.Helper()
	ch, err := ParseChunkHeader(r.read(chunkHeaderSize))
	if err != nil || ch.Cookie != cookie || ch.Type != ChunkError || ch.Flags&ChunkFlagDone == 0 {
		r.t.Fatalf("error chunk for cookie %d: %+v %v", cookie, ch, err)
	}
	ec, err := ParseErrorChunk(ch.Type, r.read(int(ch.Length)))
	if err != nil {
		r.t.Fatal(err)
	}
	return ec.Errno
}

// closedWithin expects the server to close the connection within d.
func (r *rawConn) closedWithin(d time.Duration) {
	r.t.Helper()
	start := time.Now()
	r.SetReadDeadline(start.Add(d + time.Second))
	r.expectClosed()
	if el := time.Since(start); el > d {
		r.t.Fatalf("closed after %v, want within %v", el, d)
	}
}

func optHeader(opt, length uint32) []byte {
	b := binary.BigEndian.AppendUint64(nil, magicIHaveOpt)
	b = binary.BigEndian.AppendUint32(b, opt)
	return binary.BigEndian.AppendUint32(b, length)
}

func reqBytes(typ, flags uint16, cookie, off uint64, n uint32) []byte {
	var h [requestSize]byte
	Request{Flags: flags, Type: typ, Cookie: cookie, Offset: off, Length: n}.Put(h[:])
	return h[:]
}

// quietLog is a Server.Logf that formats (so the format strings are
// exercised) and counts, but never writes after a test has ended.
type quietLog struct{ n atomic.Int64 }

func (q *quietLog) logf(format string, a ...any) {
	_ = fmt.Sprintf(format, a...)
	q.n.Add(1)
}

func TestHostilePeersNoLeak(t *testing.T) {
	const size = 64 << 20 // sparse; large enough that a 33 MiB WRITE is in range
	// Short enough, with bound below, to tell a bounded handshake from the
	// default (DefaultHandshakeTimeout), long enough that a well-behaved
	// handshake on the short server (goodShort, r.enter in "idle in
	// transmission then close") finishes within it on a busy machine: the
	// deadline is set once at accept and covers the whole handshake.
	const handshakeTimeout = time.Second
	var logs quietLog
	// Two servers on one backend. The cases that idle, to prove the
	// handshake is bounded, use one with a short handshake timeout; all
	// others use the default, so a busy CI machine under -race (which once
	// took over 300 ms to trade six 64 KiB options) cannot cut them short.
	backend := NewMemory(size)
	short := startCustomServer(t, &Server{
		Exports:          []Export{{Name: "disk", Backend: backend}},
		HandshakeTimeout: handshakeTimeout,
		Logf:             logs.logf,
	})
	normal := startCustomServer(t, &Server{
		Exports: []Export{{Name: "disk", Backend: backend}},
		Logf:    logs.logf,
	})
	goodShort := dial(t, short, ClientOptions{Export: "disk"})
	goodNormal := dial(t, normal, ClientOptions{Export: "disk"})
	bound := handshakeTimeout + 2*time.Second // generous: -race and a busy machine

	cases := []struct {
		name  string
		idles bool // relies on the short handshake timeout
		run   func(t *testing.T, r *rawConn)
	}{
		{"client flags truncated then close", false, func(t *testing.T, r *rawConn) {
			r.read(greetingSize)
			r.Write([]byte{0, 0})
		}},
		{"client flags truncated then idle", true, func(t *testing.T, r *rawConn) {
			r.read(greetingSize)
			r.Write([]byte{0, 0})
			r.closedWithin(bound)
		}},
		{"idle after greeting", true, func(t *testing.T, r *rawConn) {
			r.read(greetingSize)
			r.closedWithin(bound)
		}},
		{"idle in option data", true, func(t *testing.T, r *rawConn) {
			r.greet(clientFixedNewstyle)
			r.Write(append(optHeader(OptGo, 100), make([]byte, 10)...))
			r.closedWithin(bound)
		}},
		{"close in option data", false, func(t *testing.T, r *rawConn) {
			r.greet(clientFixedNewstyle)
			r.Write(append(optHeader(99, 1000), make([]byte, 10)...))
		}},
		{"bad client flags", false, func(t *testing.T, r *rawConn) {
			r.greet(0xFFFFFFFF)
			r.expectClosed()
		}},
		{"option length 0xFFFFFFFF", false, func(t *testing.T, r *rawConn) {
			r.greet(clientFixedNewstyle | clientNoZeroes)
			r.Write(append(optHeader(OptInfo, 0xFFFFFFFF), make([]byte, 4096)...))
			if opt, typ, _ := r.optReply(); opt != OptInfo || typ != RepErrTooBig {
				t.Fatalf("reply opt %d type %x, want ERR_TOO_BIG", opt, typ)
			}
			r.expectClosed()
		}},
		{"unknown options with data then GO", false, func(t *testing.T, r *rawConn) {
			r.greet(clientFixedNewstyle | clientNoZeroes)
			big := bytes.Repeat([]byte{0x25, 0x60, 0x95, 0x13}, maxOptionLength/4) // request magic, to catch a lost frame
			for _, o := range []uint32{0, 4, 12, 99, 0x7FFFFFFF, 0xFFFFFFFF} {
				r.opt(o, big)
				if opt, typ, _ := r.optReply(); opt != o || typ != RepErrUnsup {
					t.Fatalf("option %d: reply opt %d type %x, want ERR_UNSUP", o, opt, typ)
				}
			}
			r.opt(OptStructuredReply, nil)
			if _, typ, _ := r.optReply(); typ != RepAck {
				t.Fatalf("SR: %x", typ)
			}
			r.opt(OptGo, goPayload("disk"))
			for _, typ, _ := r.optReply(); typ != RepAck; _, typ, _ = r.optReply() {
				if typ != RepInfo {
					t.Fatalf("GO: %x", typ)
				}
			}
			r.request(CmdRead, 0, 7, 0, 512, nil)
			r.dataReply(7, 0, 512)
		}},
		{"GO for a missing export then the right one", false, func(t *testing.T, r *rawConn) {
			r.greet(clientFixedNewstyle | clientNoZeroes)
			for _, name := range []string{"nosuch", "DISK", "disk\x00", string(make([]byte, maxStringLength))} {
				r.opt(OptGo, goPayload(name))
				if _, typ, msg := r.optReply(); typ != RepErrUnknown {
					t.Fatalf("GO %q: %x %s", name, typ, msg)
				}
			}
			r.opt(OptGo, goPayload("disk"))
			for _, typ, _ := r.optReply(); typ != RepAck; _, typ, _ = r.optReply() {
			}
			r.request(CmdFlush, 0, 1, 0, 0, nil)
			if e := r.simpleErrno(1); e != 0 {
				t.Fatalf("FLUSH after GO: %v", e)
			}
		}},
		{"ABORT", false, func(t *testing.T, r *rawConn) {
			r.greet(clientFixedNewstyle)
			r.opt(OptAbort, nil)
			if _, typ, _ := r.optReply(); typ != RepAck {
				t.Fatalf("ABORT: %x", typ)
			}
			r.expectClosed()
		}},
		{"bad request magic", false, func(t *testing.T, r *rawConn) {
			r.enter()
			r.Write(bytes.Repeat([]byte{0xff}, requestSize))
			r.expectClosed()
		}},
		{"bad request magic after pipelined reads", false, func(t *testing.T, r *rawConn) {
			r.enter()
			var b []byte
			for i := range 8 {
				b = append(b, reqBytes(CmdRead, 0, uint64(i+1), uint64(i)*65536, 65536)...)
			}
			b = append(b, magicSimpleReplyBytes()...) // a reply magic where a request belongs
			b = append(b, make([]byte, requestSize-4)...)
			r.Write(b)
			seen := map[uint64]bool{}
			for range 8 {
				ch, err := ParseChunkHeader(r.read(chunkHeaderSize))
				if err != nil || ch.Type != ChunkOffsetData || ch.Length != 8+65536 {
					t.Fatalf("reply %+v %v", ch, err)
				}
				r.read(int(ch.Length))
				seen[ch.Cookie] = true
			}
			if len(seen) != 8 {
				t.Fatalf("cookies %v", seen)
			}
			r.expectClosed()
		}},
		{"unknown commands and flags", false, func(t *testing.T, r *rawConn) {
			r.enter()
			cookie := uint64(100)
			simple := func(typ, flags uint16, payload []byte, want Errno) {
				t.Helper()
				cookie++
				r.Write(append(reqBytes(typ, flags, cookie, 4096, uint32(len(payload))), payload...))
				if e := r.simpleErrno(cookie); e != want {
					t.Fatalf("%s flags %#x: %v, want %v", CmdName(typ), flags, e, want)
				}
			}
			for _, typ := range []uint16{8, 9, 0x7FFF, 0xFFFF} {
				simple(typ, 0, nil, EINVAL)
			}
			simple(CmdFlush, CmdFlagReqOne, nil, EINVAL)
			simple(CmdFlush, 1<<15, nil, EINVAL)
			simple(CmdTrim, CmdFlagDF, nil, EINVAL)
			simple(CmdCache, CmdFlagNoHole, nil, EINVAL)
			simple(CmdWriteZeroes, CmdFlagDF, nil, EINVAL)
			simple(CmdBlockStatus, CmdFlagNoHole, nil, EINVAL)
			// A WRITE with a bad flag: refused, and its payload drained
			// (it holds a request header, which must not be obeyed).
			payload := append(reqBytes(CmdDisc, 0, 0, 0, 0), bytes.Repeat([]byte{0xEE}, 512-requestSize)...)
			simple(CmdWrite, CmdFlagReqOne, payload, EINVAL)
			simple(CmdWrite, 0xFFFF, payload, EINVAL)
			cookie++
			r.request(CmdRead, CmdFlagNoHole, cookie, 4096, 512, nil)
			if e := r.errChunk(cookie); e != EINVAL {
				t.Fatalf("READ with NO_HOLE: %v", e)
			}
			cookie++
			r.request(CmdRead, 0, cookie, 4096, 512, nil)
			if got := r.dataReply(cookie, 4096, 512); bytes.Contains(got, []byte{0xEE}) {
				t.Fatal("a refused WRITE's payload was written")
			}
		}},
		{"offset+length overflowing 2^64", false, func(t *testing.T, r *rawConn) {
			r.enter()
			cookie := uint64(200)
			for _, ol := range []struct {
				off uint64
				n   uint32
			}{{^uint64(0) - 100, 512}, {^uint64(0), 1}, {1 << 63, 4096}, {^uint64(0) - 0xFFFFFFFE + 1, 0xFFFFFFFF}} {
				for _, c := range []struct {
					typ  uint16
					want Errno
				}{{CmdWrite, ENOSPC}, {CmdWriteZeroes, ENOSPC}, {CmdTrim, EINVAL}, {CmdCache, EINVAL}, {CmdBlockStatus, EINVAL}} {
					cookie++
					var payload []byte
					n := ol.n
					if c.typ == CmdWrite {
						n = 512
						payload = make([]byte, n)
					}
					r.Write(append(reqBytes(c.typ, 0, cookie, ol.off, n), payload...))
					if e := r.simpleErrno(cookie); e != c.want {
						t.Fatalf("%s at %#x+%d: %v, want %v", CmdName(c.typ), ol.off, n, e, c.want)
					}
				}
				cookie++
				r.request(CmdRead, 0, cookie, ol.off, min(ol.n, 4096), nil)
				if e := r.errChunk(cookie); e != EINVAL {
					t.Fatalf("READ at %#x: %v, want EINVAL", ol.off, e)
				}
			}
		}},
		{"reads and writes past the end", false, func(t *testing.T, r *rawConn) {
			r.enter()
			r.request(CmdRead, 0, 1, size-511, 512, nil)
			if e := r.errChunk(1); e != EINVAL {
				t.Fatalf("READ across the end: %v", e)
			}
			r.request(CmdRead, 0, 2, size, 1, nil)
			if e := r.errChunk(2); e != EINVAL {
				t.Fatalf("READ after the end: %v", e)
			}
			r.request(CmdRead, 0, 3, size, 0, nil)
			r.dataReply(3, size, 0) // empty read at the end: allowed, NONE chunk
			r.request(CmdWrite, 0, 4, size-511, 512, bytes.Repeat([]byte{1}, 512))
			if e := r.simpleErrno(4); e != ENOSPC {
				t.Fatalf("WRITE across the end: %v", e)
			}
			r.request(CmdWriteZeroes, 0, 5, size, 512, nil)
			if e := r.simpleErrno(5); e != ENOSPC {
				t.Fatalf("WRITE_ZEROES after the end: %v", e)
			}
			r.request(CmdTrim, 0, 6, size-4096, 8192, nil)
			if e := r.simpleErrno(6); e != EINVAL {
				t.Fatalf("TRIM across the end: %v", e)
			}
			last := bytes.Repeat([]byte{0x5a}, 512)
			r.request(CmdWrite, 0, 7, size-512, 512, last)
			if e := r.simpleErrno(7); e != 0 {
				t.Fatalf("WRITE ending at the end: %v", e)
			}
			r.request(CmdRead, 0, 8, size-512, 512, nil)
			if got := r.dataReply(8, size-512, 512); !bytes.Equal(got, last) {
				t.Fatal("last block not written")
			}
		}},
		{"33 MiB WRITE payload", false, func(t *testing.T, r *rawConn) {
			// Refused unread: EINVAL, then the connection ends (the
			// payload, DISC requests here, is never taken for headers).
			r.enter()
			r.SetDeadline(time.Now().Add(30 * time.Second))
			big := bytes.Repeat(reqBytes(CmdDisc, 0, 0, 0, 0), (33<<20)/requestSize+1)[:33<<20]
			r.request(CmdWrite, 0, 1, 0, 33<<20, big)
			if e := r.simpleErrno(1); e != EINVAL {
				t.Fatalf("33 MiB WRITE: %v, want EINVAL", e)
			}
			r.expectClosed()
		}},
		{"close in a WRITE payload", false, func(t *testing.T, r *rawConn) {
			r.enter()
			r.request(CmdWrite, 0, 1, 0, 1<<20, make([]byte, 1000))
		}},
		{"close in a 33 MiB WRITE payload", false, func(t *testing.T, r *rawConn) {
			r.enter()
			r.request(CmdWrite, 0, 1, 0, 33<<20, make([]byte, 1<<20))
		}},
		{"close with replies unread", false, func(t *testing.T, r *rawConn) {
			r.enter()
			var b []byte
			for i := range 64 {
				b = append(b, reqBytes(CmdRead, 0, uint64(i+1), 0, 256<<10)...)
			}
			r.Write(b) // 16 MiB of replies nobody reads
			time.Sleep(50 * time.Millisecond)
		}},
		{"idle in transmission then close", true, func(t *testing.T, r *rawConn) {
			r.enter()
			time.Sleep(handshakeTimeout + 100*time.Millisecond)
			// Transmission has no timeout (fio never sends DISC); the
			// connection must still work.
			r.request(CmdFlush, 0, 1, 0, 0, nil)
			if e := r.simpleErrno(1); e != 0 {
				t.Fatal(e)
			}
		}},
		{"DISC with a WRITE in flight", false, func(t *testing.T, r *rawConn) {
			r.enter()
			b := append(reqBytes(CmdWrite, 0, 9, 65536, 65536), make([]byte, 65536)...)
			b = append(b, reqBytes(CmdDisc, 0, 0, 0, 0)...)
			b = append(b, []byte("garbage after DISC")...)
			r.Write(b)
			if e := r.simpleErrno(9); e != 0 {
				t.Fatalf("WRITE before DISC: %v", e)
			}
			r.expectClosed()
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts, good := normal, goodNormal
			if tc.idles {
				ts, good = short, goodShort
			}
			base := snapshot()
			func() {
				r := rawDialBare(t, ts)
				defer r.Close()
				tc.run(t, r)
			}()
			expectNoLeak(t, base, tc.name, func() bool { return ts.srv.Stats().Open == 1 })
			// The well-behaved client still works.
			msg := []byte(fmt.Sprintf("alive after case %d", i))
			if _, err := good.WriteAt(msg, 8192); err != nil {
				t.Fatalf("good client: %v", err)
			}
			got := make([]byte, len(msg))
			if _, err := good.ReadAt(got, 8192); err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("good client read %q %v", got, err)
			}
		})
	}
	if logs.n.Load() == 0 {
		t.Error("no protocol error was logged")
	}
}

func magicSimpleReplyBytes() []byte { return binary.BigEndian.AppendUint32(nil, magicSimpleReply) }

// TestReadOnlyRefusesAllWrites extends TestReadOnlyRefusesWrites: every
// command that changes data, with every flag combination, gets EPERM (also
// FAST_ZERO, which would otherwise be ENOTSUP), nothing changes, and the
// commands that do not write still work.
func TestReadOnlyRefusesAllWrites(t *testing.T) {
	const size = 1 << 20
	mem := NewMemory(size)
	orig := make([]byte, size)
	PatternFill(0, orig)
	mem.WriteAt(orig, 0)
	ts := startServer(t, Export{Backend: mem, ReadOnly: true})
	r := rawDial(t, ts)
	r.greet(clientFixedNewstyle | clientNoZeroes)
	r.opt(OptStructuredReply, nil)
	r.optReply()
	r.opt(OptGo, goPayload(""))
	var tflags uint16
	for {
		_, typ, data := r.optReply()
		if typ == RepAck {
			break
		}
		if binary.BigEndian.Uint16(data) == InfoExport {
			tflags = binary.BigEndian.Uint16(data[10:])
		}
	}
	if tflags&FlagReadOnly == 0 || tflags&FlagSendFastZero == 0 {
		t.Fatalf("flags %#x: want READ_ONLY and SEND_FAST_ZERO", tflags)
	}
	cookie := uint64(0)
	expect := func(typ, flags uint16, off uint64, n uint32, want Errno) {
		t.Helper()
		cookie++
		var payload []byte
		if typ == CmdWrite {
			payload = make([]byte, n)
		}
		r.request(typ, flags, cookie, off, n, payload)
		if e := r.simpleErrno(cookie); e != want {
			t.Fatalf("%s flags %#x at %d+%d: %v, want %v", CmdName(typ), flags, off, n, e, want)
		}
	}
	for _, f := range []uint16{0, CmdFlagFUA} {
		expect(CmdWrite, f, 0, 4096, EPERM)
		expect(CmdWrite, f, 0, 0, EPERM)
		expect(CmdTrim, f, 0, 4096, EPERM)
		expect(CmdTrim, f, 0, size, EPERM)
		for _, z := range []uint16{0, CmdFlagNoHole, CmdFlagFastZero, CmdFlagNoHole | CmdFlagFastZero} {
			expect(CmdWriteZeroes, f|z, 0, 4096, EPERM)
		}
		expect(CmdFlush, f, 0, 0, 0)
		expect(CmdCache, f, 0, 4096, 0)
	}
	expect(CmdWriteZeroes, 0, 0, size, EPERM)
	r.request(CmdRead, 0, 999, 0, size, nil)
	if got := r.dataReply(999, 0, size); !bytes.Equal(got, orig) {
		t.Fatal("read-only export changed")
	}
}

// TestServerCapsOversizeWriteMemory: a 33 MiB WRITE is refused (EINVAL,
// or the connection closed under the client's send) without the server
// buffering it, and the server serves the next client.
func TestServerCapsOversizeWriteMemory(t *testing.T) {
	ts := startServer(t, Export{Backend: NewMemory(64 << 20)})
	c := dial(t, ts, ClientOptions{})
	big := make([]byte, 33<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.WriteAt(big, 0)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("33 MiB write succeeded, want EINVAL or the connection closed")
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Fatalf("the server allocated %d MiB while refusing a 33 MiB write", d>>20)
	}
	if _, err := dial(t, ts, ClientOptions{}).WriteAt([]byte("in sync"), 0); err != nil {
		t.Fatal(err)
	}
}

// heldBackend holds every ReadAt and WriteAt until released and records the
// most payload bytes it held at once: the server's payload buffers of one
// connection, since every accepted request reaches a worker.
type heldBackend struct {
	Backend
	mu        sync.Mutex
	cur, peak int64
	calls     int
	gate      chan struct{}
}

func (h *heldBackend) hold(n int) func() {
	h.mu.Lock()
	h.cur += int64(n)
	h.calls++
	h.peak = max(h.peak, h.cur)
	h.mu.Unlock()
	<-h.gate
	return func() {
		h.mu.Lock()
		h.cur -= int64(n)
		h.mu.Unlock()
	}
}

func (h *heldBackend) ReadAt(p []byte, off int64) (int, error) {
	defer h.hold(len(p))()
	return h.Backend.ReadAt(p, off)
}

func (h *heldBackend) WriteAt(p []byte, off int64) (int, error) {
	defer h.hold(len(p))()
	return h.Backend.WriteAt(p, off)
}

func (h *heldBackend) state() (cur, peak int64, calls int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur, h.peak, h.calls
}

// TestServerCapsInFlightBytes: a client pipelining 32 MiB of writes (or
// reads) against a 4 MiB cap per connection never makes the server hold
// more than the cap; once the backend moves, everything completes.
func TestServerCapsInFlightBytes(t *testing.T) {
	const limit = 4 << 20
	const reqSize = 1 << 20
	for _, cmd := range []uint16{CmdWrite, CmdRead} {
		t.Run(CmdName(cmd), func(t *testing.T) {
			hb := &heldBackend{Backend: NewMemory(64 << 20), gate: make(chan struct{})}
			ts := startCustomServer(t, &Server{Exports: []Export{{Backend: hb}}, MaxInFlightBytes: limit})
			c := dial(t, ts, ClientOptions{})
			released := false
			defer func() {
				if !released {
					close(hb.gate)
				}
			}()
			ops := make([]*Op, 32)
			for i := range ops {
				op := NewOp()
				op.Cmd, op.Offset, op.Buf = cmd, uint64(i*reqSize), make([]byte, reqSize)
				ops[i] = op
			}
			// Start blocks once the server stops reading WRITE payloads:
			// send from a goroutine.
			started := make(chan error, 1)
			go func() {
				for _, op := range ops {
					if err := c.Start(op); err != nil {
						started <- err
						return
					}
				}
				started <- nil
			}()
			// Wait for the server to fill its allowance, then give it time
			// to (wrongly) take more.
			deadline := time.Now().Add(5 * time.Second)
			for {
				if cur, _, _ := hb.state(); cur >= limit || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			cur, peak, calls := hb.state()
			if cur != limit || peak > limit {
				t.Fatalf("server holds %d bytes (peak %d, %d requests) with a cap of %d", cur, peak, calls, limit)
			}
			close(hb.gate)
			released = true
			if err := within(t, started, 10*time.Second, "the requests sent after the backend moved"); err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				if err := waitTimeout(t, op, 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			if _, peak, calls := hb.state(); peak > limit || calls != len(ops) {
				t.Fatalf("peak %d bytes over %d calls", peak, calls)
			}
		})
	}
}

// TestServerMaxConns: with MaxConns N, the N+1th connection is closed
// without a handshake, the first N keep working, and a slot freed by a
// client leaving can be taken again.
func TestServerMaxConns(t *testing.T) {
	const n = 3
	ts := startCustomServer(t, &Server{Exports: []Export{{Backend: NewMemory(1 << 20)}}, MaxConns: n})
	base := snapshot()
	var cls []*Client
	for range n {
		ctx, cancel := contextTimeout(5 * time.Second)
		c, err := Dial(ctx, ts.uri, ClientOptions{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		cls = append(cls, c)
	}
	for range 3 {
		r := rawDialBare(t, ts)
		r.expectClosed() // no greeting: closed at once
		r.Close()
	}
	ctx, cancel := contextTimeout(5 * time.Second)
	if c, err := Dial(ctx, ts.uri, ClientOptions{}); err == nil {
		c.Close()
		t.Fatal("connection beyond MaxConns accepted")
	}
	cancel()
	for _, c := range cls {
		if _, err := c.ReadAt(make([]byte, 512), 0); err != nil {
			t.Fatal(err)
		}
	}
	cls[0].Close()
	var again *Client
	deadline := time.Now().Add(5 * time.Second)
	for again == nil {
		ctx, cancel := contextTimeout(5 * time.Second)
		c, err := Dial(ctx, ts.uri, ClientOptions{})
		cancel()
		if err == nil {
			again = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("freed slot not reusable: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	again.Close()
	for _, c := range cls[1:] {
		c.Close()
	}
	expectNoLeak(t, base, "MaxConns", func() bool { return ts.srv.Stats().Open == 0 })
}
