package nbd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// Our Client against broken and hostile servers (issue 6): a fake server
// written here, over a real unix socket, negotiates properly and then
// misbehaves. The client must report a clear error, complete every request
// (no op.Wait hangs), and leave no goroutine or file descriptor behind.

const fakeExportSize = 1 << 20

// fakeOptReply encodes an option reply.
func fakeOptReply(opt, typ uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, magicOptReply)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, typ)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// fakeGreeting is a fixed-newstyle server's greeting (NBDMAGIC,
// IHAVEOPT, fixed newstyle and no zeroes).
func fakeGreeting() []byte {
	g := binary.BigEndian.AppendUint64(nil, magicNBD)
	g = binary.BigEndian.AppendUint64(g, magicIHaveOpt)
	return binary.BigEndian.AppendUint16(g, flagFixedNewstyle|flagNoZeroes)
}

// fakeHandshake is the server side of a fixed-newstyle negotiation: SR is
// acknowledged when sr (else ERR_UNSUP), SET_META_CONTEXT selects
// base:allocation with id 1, GO answers INFO_EXPORT and enters
// transmission. Everything else gets ERR_UNSUP.
func fakeHandshake(c io.ReadWriter, sr bool, size uint64) error {
	if _, err := c.Write(fakeGreeting()); err != nil {
		return err
	}
	var cf [4]byte
	if _, err := io.ReadFull(c, cf[:]); err != nil {
		return err
	}
	for {
		var h [optHeaderSize]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return err
		}
		oh, err := ParseOptionHeader(h[:])
		if err != nil || oh.Length > maxOptionLength {
			return fmt.Errorf("fake server: option header % x", h)
		}
		data := make([]byte, oh.Length)
		if _, err := io.ReadFull(c, data); err != nil {
			return err
		}
		var out []byte
		switch oh.Option {
		case OptStructuredReply:
			if sr {
				out = fakeOptReply(oh.Option, RepAck, nil)
			} else {
				out = fakeOptReply(oh.Option, RepErrUnsup, nil)
			}
		case OptSetMetaContext:
			p := binary.BigEndian.AppendUint32(nil, 1)
			p = append(p, MetaContextBaseAllocation...)
			out = append(fakeOptReply(oh.Option, RepMetaContext, p), fakeOptReply(oh.Option, RepAck, nil)...)
		case OptGo:
			flags := FlagHasFlags | FlagSendFlush | FlagSendFUA | FlagSendTrim | FlagSendWriteZeroes
			if sr {
				flags |= FlagSendDF
			}
			p := binary.BigEndian.AppendUint16(nil, InfoExport)
			p = binary.BigEndian.AppendUint64(p, size)
			p = binary.BigEndian.AppendUint16(p, flags)
			out = append(fakeOptReply(oh.Option, RepInfo, p), fakeOptReply(oh.Option, RepAck, nil)...)
			_, err := c.Write(out)
			return err
		default:
			out = fakeOptReply(oh.Option, RepErrUnsup, nil)
		}
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}

func simpleReplyBytes(errno Errno, cookie uint64) []byte {
	b := make([]byte, simpleReplySize)
	putSimpleReply(b, errno, cookie)
	return b
}

func chunkBytes(flags, typ uint16, cookie uint64, payload []byte) []byte {
	b := make([]byte, chunkHeaderSize, chunkHeaderSize+len(payload))
	putChunkHeader(b, flags, typ, cookie, uint32(len(payload)))
	return append(b, payload...)
}

func offsetData(flags uint16, cookie, off uint64, data []byte) []byte {
	p := binary.BigEndian.AppendUint64(nil, off)
	return chunkBytes(flags, ChunkOffsetData, cookie, append(p, data...))
}

// statusPayload is a BLOCK_STATUS chunk's payload: the context's id, then
// each extent's length and flags.
func statusPayload(context uint32, lengthFlags ...uint32) []byte {
	p := binary.BigEndian.AppendUint32(nil, context)
	for _, v := range lengthFlags {
		p = binary.BigEndian.AppendUint32(p, v)
	}
	return p
}

func errorPayload(errno Errno, msg string) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(errno))
	p = binary.BigEndian.AppendUint16(p, uint16(len(msg)))
	return append(p, msg...)
}

// fakePeer is the fake server's side of the connection.
type fakePeer struct {
	c    net.Conn
	errs chan error
}

// req reads one request and any WRITE payload.
func (p *fakePeer) req() Request {
	var h [requestSize]byte
	if _, err := io.ReadFull(p.c, h[:]); err != nil {
		p.fail(fmt.Errorf("fake server reading a request: %w", err))
		return Request{}
	}
	r, err := ParseRequest(h[:])
	if err != nil {
		p.fail(err)
		return r
	}
	if r.Type == CmdWrite {
		io.CopyN(io.Discard, p.c, int64(r.Length))
	}
	return r
}

func (p *fakePeer) reqs(n int) []Request {
	out := make([]Request, n)
	for i := range out {
		out[i] = p.req()
	}
	return out
}

func (p *fakePeer) send(bs ...[]byte) { p.write(bs, func(error) bool { return false }) }

// sendRejected sends a reply the client must reject part-way: once it has
// read the offending header it fails the connection and closes its end, so
// the rest of the reply may meet EPIPE or ECONNRESET. That is the expected
// end of such a script, not a harness failure; any other write error is.
// Only for cases whose check asserts the client's rejection (protocolError),
// so a client that hung up for another reason still fails the check.
func (p *fakePeer) sendRejected(bs ...[]byte) {
	p.write(bs, func(err error) bool { return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) })
}

// write sends bs in turn and stops at the first write error, a harness
// failure unless the script expected it.
func (p *fakePeer) write(bs [][]byte, expected func(error) bool) {
	for _, b := range bs {
		if _, err := p.c.Write(b); err != nil {
			if !expected(err) {
				p.fail(fmt.Errorf("fake server writing: %w", err))
			}
			return
		}
	}
}

// hold keeps the connection open, reading whatever comes, until the client
// closes it: a misbehaving server that does not hang up, so the client cannot
// count on EOF to notice.
func (p *fakePeer) hold() { io.Copy(io.Discard, p.c) }

func (p *fakePeer) fail(err error) {
	select {
	case p.errs <- err:
	default:
	}
}

// startFake serves one connection on a unix socket with script after a
// proper handshake, and returns the URI to dial.
func startFake(t *testing.T, sr bool, script func(p *fakePeer)) URI {
	t.Helper()
	p := &fakePeer{errs: make(chan error, 1)}
	sock, wait := serveOne(t, 15*time.Second, func(c net.Conn) {
		p.c = c
		if err := fakeHandshake(c, sr, fakeExportSize); err != nil {
			p.fail(err)
			return
		}
		script(p)
	})
	t.Cleanup(func() {
		if !wait(15 * time.Second) {
			t.Error("fake server did not finish")
		}
		select {
		case err := <-p.errs:
			t.Errorf("fake server: %v", err)
		default:
		}
	})
	return URI{Transport: "unix", Socket: sock}
}

// serveOne listens on a fresh unix socket and serves the first connection
// made to it with serve, which has deadline to do so, then closes it. It
// returns the socket and wait, which closes the listener (so a server no
// one dialled ends too) and reports whether serve finished within limit.
func serveOne(t *testing.T, deadline time.Duration, serve func(c net.Conn)) (sock string, wait func(limit time.Duration) bool) {
	t.Helper()
	sock = filepath.Join(testbin.ShortDir(t), "f.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(deadline))
		serve(c)
	}()
	return sock, func(limit time.Duration) bool {
		ln.Close()
		select {
		case <-done:
			return true
		case <-time.After(limit):
			return false
		}
	}
}

type opSpec struct {
	cmd  uint16
	off  uint64
	n    int
	flag uint16
}

func (s opSpec) op() *Op {
	op := NewOp()
	op.Cmd, op.Offset, op.Flags = s.cmd, s.off, s.flag
	switch s.cmd {
	case CmdRead, CmdWrite:
		op.Buf = make([]byte, s.n)
	default:
		op.Length = uint32(s.n)
	}
	return op
}

func isProtocolError(err error, substr string) bool {
	var pe *ProtocolError
	return errors.As(err, &pe) && strings.Contains(err.Error(), substr)
}

func TestClientAgainstHostileServer(t *testing.T) {
	read4k := []opSpec{{cmd: CmdRead, off: 8192, n: 4096}}
	three := []opSpec{{cmd: CmdRead, off: 0, n: 4096}, {cmd: CmdWrite, off: 4096, n: 512}, {cmd: CmdFlush}}
	// protocolError: every request fails, the first with a ProtocolError
	// naming the problem, and the client is dead.
	protocolError := func(substr string) func(t *testing.T, cl *Client, errs []error) {
		return func(t *testing.T, cl *Client, errs []error) {
			t.Helper()
			for i, err := range errs {
				if err == nil {
					t.Fatalf("request %d succeeded", i)
				}
			}
			if !isProtocolError(errs[0], substr) && !isProtocolError(cl.Err(), substr) {
				t.Fatalf("error %v (client: %v), want a protocol error about %q", errs[0], cl.Err(), substr)
			}
			if cl.Err() == nil {
				t.Fatal("client still alive after a protocol error")
			}
			if err := cl.Start(NewOp()); err == nil {
				t.Fatal("Start on a dead client succeeded")
			}
		}
	}
	allFail := func(substr string) func(t *testing.T, cl *Client, errs []error) {
		return func(t *testing.T, cl *Client, errs []error) {
			t.Helper()
			for i, err := range errs {
				if err == nil || !strings.Contains(err.Error(), substr) {
					t.Fatalf("request %d: %v, want an error about %q", i, err, substr)
				}
			}
		}
	}
	// stillWorks checks the connection survived an error scoped to one request.
	stillWorks := func(t *testing.T, cl *Client) {
		t.Helper()
		if err := cl.Err(); err != nil {
			t.Fatalf("client dead: %v", err)
		}
		op := NewOp()
		op.Cmd = CmdFlush
		if err := cl.Start(op); err != nil {
			t.Fatal(err)
		}
		if err := waitTimeout(t, op, 5*time.Second); err != nil {
			t.Fatalf("FLUSH after a request error: %v", err)
		}
	}
	// replyOnce scripts a server that reads one request, sends reply's
	// answer to it and holds the connection open: what happens next is the
	// client's doing alone.
	replyOnce := func(reply func(r Request) []byte) func(p *fakePeer) {
		return func(p *fakePeer) {
			p.send(reply(p.req()))
			p.hold()
		}
	}
	// answerFlush serves the FLUSH of stillWorks, then holds.
	answerFlush := replyOnce(func(r Request) []byte { return simpleReplyBytes(0, r.Cookie) })
	// replyThenFlush is replyOnce, then serves the FLUSH of stillWorks.
	replyThenFlush := func(reply func(r Request) []byte) func(p *fakePeer) {
		return func(p *fakePeer) {
			p.send(reply(p.req()))
			answerFlush(p)
		}
	}

	cases := []struct {
		name   string
		sr     bool
		ops    []opSpec
		script func(p *fakePeer)
		check  func(t *testing.T, cl *Client, errs []error)
	}{
		{"unknown cookie, simple", false, three, func(p *fakePeer) {
			p.reqs(3)
			p.send(simpleReplyBytes(0, 0xdeadbeef))
			p.hold()
		}, protocolError("unknown cookie")},
		{"unknown cookie, structured", true, three, func(p *fakePeer) {
			rs := p.reqs(3)
			p.send(chunkBytes(ChunkFlagDone, ChunkNone, rs[2].Cookie+1000, nil))
			p.hold()
		}, protocolError("unknown cookie")},
		{"cookie answered twice", true, three, func(p *fakePeer) {
			rs := p.reqs(3)
			p.send(simpleReplyBytes(0, rs[2].Cookie), simpleReplyBytes(0, rs[2].Cookie))
			p.hold()
		}, func(t *testing.T, cl *Client, errs []error) {
			if errs[2] != nil || errs[0] == nil || errs[1] == nil || !isProtocolError(cl.Err(), "unknown cookie") {
				t.Fatalf("errs %v, client %v", errs, cl.Err())
			}
		}},
		{"short read, simple", false, read4k, func(p *fakePeer) {
			r := p.req()
			p.send(simpleReplyBytes(0, r.Cookie), make([]byte, 1000))
		}, allFail("unexpected EOF")},
		{"short read, structured", true, read4k, func(p *fakePeer) {
			r := p.req()
			b := offsetData(ChunkFlagDone, r.Cookie, r.Offset, make([]byte, 4096))
			p.send(b[:chunkHeaderSize+8+1000])
		}, allFail("unexpected EOF")},
		{"close inside a reply header", true, three, func(p *fakePeer) {
			r := p.reqs(3)
			p.send(simpleReplyBytes(0, r[2].Cookie)[:10])
		}, allFail("EOF")},
		{"close with requests in flight", true, three, func(p *fakePeer) {
			p.reqs(3)
		}, allFail("EOF")},
		{"OFFSET_DATA after the request", true, read4k, replyOnce(func(r Request) []byte {
			return offsetData(ChunkFlagDone, r.Cookie, r.Offset+512, make([]byte, 4096))
		}), protocolError("overruns")},
		{"OFFSET_DATA before the request", true, read4k, replyOnce(func(r Request) []byte {
			return offsetData(ChunkFlagDone, r.Cookie, r.Offset-512, make([]byte, 512))
		}), protocolError("overruns")},
		{"OFFSET_DATA of 4 GiB", true, read4k, replyOnce(func(r Request) []byte {
			b := offsetData(ChunkFlagDone, r.Cookie, r.Offset, nil)
			binary.BigEndian.PutUint32(b[16:], 0xFFFFFFFF)
			return b
		}), protocolError("overruns")},
		{"OFFSET_DATA offset wraps 2^64", true, read4k, replyOnce(func(r Request) []byte {
			return offsetData(ChunkFlagDone, r.Cookie, ^uint64(0)-10, make([]byte, 512))
		}), protocolError("overruns")},
		{"OFFSET_HOLE overrun", true, read4k, replyOnce(func(r Request) []byte {
			pl := binary.BigEndian.AppendUint64(nil, r.Offset)
			pl = binary.BigEndian.AppendUint32(pl, 8192)
			return chunkBytes(ChunkFlagDone, ChunkOffsetHole, r.Cookie, pl)
		}), protocolError("overruns")},
		{"OFFSET_DATA shorter than 9 bytes", true, read4k, replyOnce(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkOffsetData, r.Cookie, make([]byte, 8))
		}), protocolError("at least 9")},
		{"OFFSET_DATA of 0 bytes", true, read4k, replyOnce(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkOffsetData, r.Cookie, nil)
		}), protocolError("at least 9")},
		{"OFFSET_DATA for a WRITE", true, []opSpec{{cmd: CmdWrite, n: 512}}, replyOnce(func(r Request) []byte {
			return offsetData(ChunkFlagDone, r.Cookie, 0, make([]byte, 512))
		}), protocolError("OFFSET_DATA chunk for WRITE")},
		{"simple reply to READ after SR", true, read4k, func(p *fakePeer) {
			r := p.req()
			// The client rejects the header; the payload may find it gone.
			p.sendRejected(simpleReplyBytes(0, r.Cookie), make([]byte, 4096))
			p.hold()
		}, protocolError("simple reply to READ")},
		{"structured reply without SR", false, read4k, replyOnce(func(r Request) []byte {
			return offsetData(ChunkFlagDone, r.Cookie, r.Offset, make([]byte, 4096))
		}), protocolError("without STRUCTURED_REPLY")},
		{"garbage magic", true, three, func(p *fakePeer) {
			p.reqs(3)
			p.send([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			p.hold()
		}, protocolError("reply magic")},
		{"unknown chunk type", true, read4k, replyOnce(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, 0x4242, r.Cookie, nil)
		}), protocolError("unknown chunk type")},
		{"NONE chunk with data", true, read4k, replyOnce(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkNone, r.Cookie, make([]byte, 4))
		}), protocolError("NONE chunk")},
		{"error chunk overrunning its message", true, read4k, replyOnce(func(r Request) []byte {
			pl := errorPayload(EIO, "x")
			binary.BigEndian.PutUint16(pl[4:], 200)
			return chunkBytes(ChunkFlagDone, ChunkError, r.Cookie, pl)
		}), allFail("overruns")},
		{"huge error chunk", true, read4k, replyOnce(func(r Request) []byte {
			b := chunkBytes(ChunkFlagDone, ChunkError, r.Cookie, nil)
			binary.BigEndian.PutUint32(b[16:], 0xFFFFFFF0)
			return b
		}), protocolError("error chunk of")},
		{"error chunk with message", true, read4k, replyThenFlush(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkError, r.Cookie, errorPayload(EIO, "disk on fire"))
		}), func(t *testing.T, cl *Client, errs []error) {
			var se *ServerError
			if !errors.Is(errs[0], EIO) || !errors.As(errs[0], &se) || se.Message != "disk on fire" ||
				!strings.Contains(errs[0].Error(), "disk on fire") {
				t.Fatalf("error %v, want EIO with the server's message", errs[0])
			}
			stillWorks(t, cl)
		}},
		{"ERROR_OFFSET then DONE", true, read4k, func(p *fakePeer) {
			r := p.req()
			pl := append(errorPayload(ENOSPC, "bad sector"), binary.BigEndian.AppendUint64(nil, r.Offset+512)...)
			p.send(chunkBytes(0, ChunkErrorOffset, r.Cookie, pl),
				offsetData(0, r.Cookie, r.Offset, make([]byte, 512)),
				chunkBytes(ChunkFlagDone, ChunkNone, r.Cookie, nil))
			answerFlush(p)
		}, func(t *testing.T, cl *Client, errs []error) {
			if !errors.Is(errs[0], ENOSPC) || !strings.Contains(errs[0].Error(), "bad sector") {
				t.Fatalf("error %v, want ENOSPC with the message", errs[0])
			}
			stillWorks(t, cl)
		}},
		{"error chunk with errno 0", true, read4k, replyThenFlush(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkError, r.Cookie, errorPayload(0, ""))
		}), func(t *testing.T, cl *Client, errs []error) {
			if !errors.Is(errs[0], EIO) {
				t.Fatalf("error %v, want EIO", errs[0])
			}
			stillWorks(t, cl)
		}},
		{"simple error reply", false, three, func(p *fakePeer) {
			rs := p.reqs(3)
			p.send(simpleReplyBytes(EPERM, rs[0].Cookie), simpleReplyBytes(ENOSPC, rs[1].Cookie), simpleReplyBytes(Errno(0xdead), rs[2].Cookie))
			answerFlush(p)
		}, func(t *testing.T, cl *Client, errs []error) {
			if !errors.Is(errs[0], EPERM) || !errors.Is(errs[1], ENOSPC) || !errors.Is(errs[2], Errno(0xdead)) {
				t.Fatalf("errors %v", errs)
			}
			stillWorks(t, cl)
		}},
		{"READ reply covering half", true, read4k, replyThenFlush(func(r Request) []byte {
			return offsetData(ChunkFlagDone, r.Cookie, r.Offset, make([]byte, 2048))
		}), func(t *testing.T, cl *Client, errs []error) {
			if !isProtocolError(errs[0], "covered 2048 of 4096") {
				t.Fatalf("error %v", errs[0])
			}
			stillWorks(t, cl)
		}},
		{"BLOCK_STATUS malformed", true, []opSpec{{cmd: CmdBlockStatus, n: 4096}}, replyOnce(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkBlockStatus, r.Cookie, make([]byte, 7))
		}), allFail("malformed")},
		{"BLOCK_STATUS simple success", true, []opSpec{{cmd: CmdBlockStatus, n: 4096}}, replyOnce(func(r Request) []byte {
			return simpleReplyBytes(0, r.Cookie)
		}), protocolError("simple success reply to BLOCK_STATUS")},
		{"two BLOCK_STATUS chunks for one context", true, []opSpec{{cmd: CmdBlockStatus, n: 8192}}, func(p *fakePeer) {
			// A server may send exactly one BLOCK_STATUS chunk per
			// negotiated context; accepting more lets it grow the
			// client's extent list without end.
			r := p.req()
			ext := statusPayload(1, 4096, 0)
			p.send(chunkBytes(0, ChunkBlockStatus, r.Cookie, ext), chunkBytes(ChunkFlagDone, ChunkBlockStatus, r.Cookie, ext))
			p.hold()
		}, protocolError("BLOCK_STATUS")},
		{"BLOCK_STATUS for a context not negotiated", true, []opSpec{{cmd: CmdBlockStatus, n: 4096}}, replyOnce(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkBlockStatus, r.Cookie, statusPayload(7, 4096, 0))
		}), protocolError("context")},
		{"BLOCK_STATUS answered properly", true, []opSpec{{cmd: CmdBlockStatus, n: 8192}}, replyThenFlush(func(r Request) []byte {
			return chunkBytes(ChunkFlagDone, ChunkBlockStatus, r.Cookie, statusPayload(1, 4096, 0, 4096, StateHole|StateZero))
		}), func(t *testing.T, cl *Client, errs []error) {
			if errs[0] != nil {
				t.Fatal(errs[0])
			}
			stillWorks(t, cl)
		}},
		{"one bad reply among 32 in flight", true, func() []opSpec {
			var s []opSpec
			for i := range 32 {
				s = append(s, opSpec{cmd: CmdRead, off: uint64(i) * 4096, n: 4096})
			}
			return s
		}(), func(p *fakePeer) {
			rs := p.reqs(32)
			for _, r := range rs[:16] {
				p.send(offsetData(ChunkFlagDone, r.Cookie, r.Offset, make([]byte, 4096)))
			}
			p.send([]byte{0x66, 0x8e, 0x33, 0x00})
			p.hold()
		}, func(t *testing.T, cl *Client, errs []error) {
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
				}
			}
			if ok != 16 || !isProtocolError(cl.Err(), "reply magic") {
				t.Fatalf("%d of 32 succeeded (want 16); client error %v", ok, cl.Err())
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := snapshot()
			uri := startFake(t, tc.sr, tc.script)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			cl, err := Dial(ctx, uri, ClientOptions{BlockStatus: true})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			// Should a check fail, end the connection before the fake
			// server's cleanup waits for it.
			t.Cleanup(func() { cl.Conn().Close() })
			if cl.Info().Structured != tc.sr {
				t.Fatalf("structured %v, want %v", cl.Info().Structured, tc.sr)
			}
			ops := make([]*Op, len(tc.ops))
			errs := make([]error, len(tc.ops))
			for i, s := range tc.ops {
				ops[i] = s.op()
				errs[i] = cl.Start(ops[i])
			}
			for i, op := range ops {
				if errs[i] == nil {
					errs[i] = waitTimeout(t, op, 5*time.Second)
				}
			}
			tc.check(t, cl, errs)
			closed := make(chan struct{})
			go func() { cl.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("Close hung")
			}
			expectNoLeak(t, base, tc.name, nil)
		})
	}
}

// TestClientHandshakeHostile: broken servers during the handshake make Dial
// fail with an error within its bound, never hang, and leak nothing.
func TestClientHandshakeHostile(t *testing.T) {
	cases := []struct {
		name   string
		script func(c net.Conn)
		want   string
	}{
		{"close at once", func(c net.Conn) {}, "EOF"},
		{"garbage greeting", func(c net.Conn) { c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n")); io.Copy(io.Discard, c) }, "greeting magic"},
		{"oldstyle server", func(c net.Conn) {
			b := binary.BigEndian.AppendUint64(nil, magicNBD)
			b = binary.BigEndian.AppendUint64(b, 0x00420281861253)
			c.Write(append(b, make([]byte, 136)...))
			io.Copy(io.Discard, c)
		}, "oldstyle"},
		{"silent", func(c net.Conn) { io.Copy(io.Discard, c) }, "timeout"},
		{"greeting then silent", func(c net.Conn) {
			c.Write(fakeGreeting())
			io.Copy(io.Discard, c)
		}, "timeout"},
		{"option reply of 4 GiB", func(c net.Conn) {
			c.Write(fakeGreeting())
			io.ReadFull(c, make([]byte, 4+optHeaderSize))
			b := fakeOptReply(OptStructuredReply, RepAck, nil)
			binary.BigEndian.PutUint32(b[16:], 0xFFFFFFFF)
			c.Write(b)
			io.Copy(io.Discard, c)
		}, "option reply of"},
		{"GO acknowledged without INFO_EXPORT", func(c net.Conn) {
			c.Write(fakeGreeting())
			io.ReadFull(c, make([]byte, 4+optHeaderSize))
			c.Write(fakeOptReply(OptStructuredReply, RepAck, nil))
			var h [optHeaderSize]byte
			io.ReadFull(c, h[:])
			io.ReadFull(c, make([]byte, binary.BigEndian.Uint32(h[12:])))
			c.Write(fakeOptReply(OptGo, RepAck, nil))
			io.Copy(io.Discard, c)
		}, "without INFO_EXPORT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := snapshot()
			sock, wait := serveOne(t, 10*time.Second, tc.script)
			// Only the cases that expect the timeout get a short one (and a
			// bound on how long Dial took); the others, which expect EOF or a
			// parse error, keep the default so a busy -race CI machine cannot
			// make them meet the timeout first. The context is a safety net
			// against a hang, longer than either handshake timeout.
			const shortTimeout, shortBound = time.Second, 5 * time.Second
			var opts ClientOptions
			timesOut := tc.want == "timeout"
			if timesOut {
				opts.HandshakeTimeout = shortTimeout
			}
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := Dial(ctx, URI{Transport: "unix", Socket: sock}, opts)
			cancel()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Dial: %v, want an error about %q", err, tc.want)
			}
			if d := time.Since(start); timesOut && d > shortBound {
				t.Fatalf("Dial took %v, want the %v handshake timeout (within %v)", d, shortTimeout, shortBound)
			}
			if !wait(10 * time.Second) {
				t.Fatal("fake server stuck")
			}
			expectNoLeak(t, base, tc.name, nil)
		})
	}
}
