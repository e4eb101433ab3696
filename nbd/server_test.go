package nbd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// testServer serves exports on a unix socket until the test ends.
type testServer struct {
	srv  *Server
	sock string
	uri  URI
}

// startServer serves exports with the default handshake timeout, so a busy
// machine cannot cut a well-behaved client's handshake short. A test of the
// handshake timeout itself uses startCustomServer with a short one.
func startServer(t testing.TB, exports ...Export) *testServer {
	t.Helper()
	return startCustomServer(t, &Server{Exports: exports})
}

func dial(t testing.TB, ts *testServer, opts ClientOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	u := ts.uri
	u.Export = opts.Export
	c, err := Dial(ctx, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRoundTripPipelined(t *testing.T) {
	for _, sr := range []bool{true, false} {
		name := "structured"
		if !sr {
			name = "simple"
		}
		t.Run(name, func(t *testing.T) {
			const size = 32 << 20
			ts := startServer(t, Export{Backend: NewMemory(size)})
			c := dial(t, ts, ClientOptions{NoStructuredReply: !sr})
			if c.Info().Structured != sr {
				t.Fatalf("structured = %v, want %v", c.Info().Structured, sr)
			}
			if c.Size() != size {
				t.Fatalf("size %d", c.Size())
			}
			want := make([]byte, size)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			// 32 requests in flight: 1 MiB writes covering everything.
			const chunk = 1 << 20
			ops := make([]*Op, size/chunk)
			for i := range ops {
				op := NewOp()
				op.Cmd, op.Offset, op.Buf = CmdWrite, uint64(i*chunk), want[i*chunk:(i+1)*chunk]
				if err := c.Start(op); err != nil {
					t.Fatal(err)
				}
				ops[i] = op
			}
			for _, op := range ops {
				if err := op.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, size)
			for i, op := range ops {
				op.Cmd, op.Buf = CmdRead, got[i*chunk:(i+1)*chunk]
				if err := c.Start(op); err != nil {
					t.Fatal(err)
				}
			}
			for _, op := range ops {
				if err := op.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			if sha256.Sum256(got) != sha256.Sum256(want) {
				t.Fatal("read back differs from what was written")
			}
			st := c.Conn().Stats()
			if st.RecvBytes < size || st.SendBytes < size {
				t.Fatalf("client counters too low: %+v", st)
			}
			if st.RecvCalls == 0 || st.SendCalls == 0 {
				t.Fatalf("no calls counted: %+v", st)
			}
			// The server counts after its syscalls return, which may be
			// after the client has read the last reply: poll.
			sst := ts.srv.Stats()
			for deadline := time.Now().Add(5 * time.Second); sst.IO.RecvBytes < size || sst.IO.SendBytes < size; sst = ts.srv.Stats() {
				if time.Now().After(deadline) {
					t.Fatalf("server counters too low after 5s: %+v", sst)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestTrimZeroBlockStatus(t *testing.T) {
	const size = 4 << 20
	ts := startServer(t, Export{Backend: NewMemory(size)})
	c := dial(t, ts, ClientOptions{BlockStatus: true})
	if c.Info().MetaID == 0 {
		t.Fatal("base:allocation not negotiated")
	}
	ext, err := c.BlockStatus(0, size, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) != 1 || ext[0].Length != size || ext[0].Flags != StateHole|StateZero {
		t.Fatalf("fresh export extents %+v", ext)
	}
	data := bytes.Repeat([]byte{0xab}, 1<<20)
	if _, err := c.WriteAt(data, 1<<20); err != nil {
		t.Fatal(err)
	}
	ext, err = c.BlockStatus(0, size, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	sawData := false
	for _, e := range ext {
		sum += e.Length
		if e.Flags == 0 {
			sawData = true
		}
	}
	if sum != size || !sawData {
		t.Fatalf("extents after write %+v", ext)
	}
	one, err := c.BlockStatus(0, size, CmdFlagReqOne)
	if err != nil || len(one) != 1 {
		t.Fatalf("REQ_ONE: %v %+v", err, one)
	}
	if err := c.WriteZeroes(1<<20, 4096, CmdFlagNoHole); err != nil {
		t.Fatal(err)
	}
	if err := c.Trim(1<<20+4096, 4096); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3*4096)
	if _, err := c.ReadAt(got, 1<<20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:8192], make([]byte, 8192)) || got[8192] != 0xab {
		t.Fatal("zero/trim did not take effect")
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	ts := startServer(t, Export{Backend: NewMemory(1 << 20), ReadOnly: true})
	c := dial(t, ts, ClientOptions{})
	if !c.Info().ReadOnly() {
		t.Fatal("read-only flag not advertised")
	}
	if _, err := c.WriteAt(make([]byte, 4096), 0); !errors.Is(err, EPERM) {
		t.Fatalf("write: %v, want EPERM", err)
	}
	if err := c.Trim(0, 4096); !errors.Is(err, EPERM) {
		t.Fatalf("trim: %v, want EPERM", err)
	}
	if err := c.WriteZeroes(0, 4096, 0); !errors.Is(err, EPERM) {
		t.Fatalf("zero: %v, want EPERM", err)
	}
	if _, err := c.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("read: %v", err)
	}
}

func TestErrorsAsSpecAssigns(t *testing.T) {
	const size = 1 << 20
	ts := startServer(t, Export{Backend: NewMemory(size)})
	c := dial(t, ts, ClientOptions{})
	cases := []struct {
		name  string
		op    func() error
		errno Errno
	}{
		{"read past end", func() error { _, err := c.ReadAt(make([]byte, 4096), size-1024); return err }, EINVAL},
		{"write past end", func() error { _, err := c.WriteAt(make([]byte, 4096), size-1024); return err }, ENOSPC},
		{"zero past end", func() error { return c.WriteZeroes(size, 512, 0) }, ENOSPC},
		{"trim past end", func() error { return c.Trim(size, 512) }, EINVAL},
		{"overflowing offset", func() error {
			op := NewOp()
			op.Cmd, op.Offset, op.Length = CmdTrim, ^uint64(0)-10, 4096
			return c.Do(op)
		}, EINVAL},
		{"unknown command", func() error { op := NewOp(); op.Cmd = 42; return c.Do(op) }, EINVAL},
		{"unknown flag", func() error { op := NewOp(); op.Cmd, op.Flags = CmdFlush, 1<<9; return c.Do(op) }, EINVAL},
		{"DF on write", func() error {
			op := NewOp()
			op.Cmd, op.Flags, op.Buf = CmdWrite, CmdFlagDF, make([]byte, 512)
			return c.Do(op)
		}, EINVAL},
		{"block status without context", func() error {
			op := NewOp()
			op.Cmd, op.Length = CmdBlockStatus, 512
			return c.Do(op)
		}, EINVAL},
		{"oversize read", func() error { _, err := c.ReadAt(make([]byte, MaxPayload+512), 0); return err }, EINVAL},
	}
	for _, tc := range cases {
		if err := tc.op(); !errors.Is(err, tc.errno) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.errno)
		}
	}
	// The connection still works after all of that.
	if _, err := c.ReadAt(make([]byte, 512), 0); err != nil {
		t.Fatalf("connection broken after errors: %v", err)
	}
}

// TestOversizeWriteRefusedUnread: a WRITE longer than the 32 MiB the
// handshake advertises gets EINVAL at once and the connection ends,
// without the server waiting for its payload (issue 33: a length of
// 0xFFFFFFFF got no answer for 30 s: the server drained toward 4 GiB).
// Only 1000 bytes of payload are sent: a server that reads it waits, and
// the reply's read runs into the connection's 5 s deadline.
func TestOversizeWriteRefusedUnread(t *testing.T) {
	var logs quietLog
	ts := startCustomServer(t, &Server{Exports: []Export{{Backend: NewMemory(64 << 20)}}, Logf: logs.logf})
	for _, n := range []uint32{0xFFFFFFFF, MaxPayload + 1} {
		r := rawDial(t, ts)
		r.enter()
		r.request(CmdWrite, 0, 7, 0, n, make([]byte, 1000))
		if e := r.simpleErrno(7); e != EINVAL {
			t.Fatalf("WRITE of %d bytes: %v, want EINVAL", n, e)
		}
		r.closedWithin(2 * time.Second)
	}
	if logs.n.Load() < 2 {
		t.Errorf("%d log lines for two refused WRITEs, want one each", logs.n.Load())
	}
	if pl := ts.srv.Stats().Payload; pl.WriteBytes != 0 {
		t.Errorf("%d WRITE bytes counted for refused WRITEs", pl.WriteBytes)
	}
	// A WRITE of exactly the maximum still works.
	if _, err := dial(t, ts, ClientOptions{}).WriteAt(make([]byte, MaxPayload), 0); err != nil {
		t.Fatalf("WRITE of %d bytes: %v", MaxPayload, err)
	}
}

func TestSetSocketBufferLive(t *testing.T) {
	ts := startServer(t, Export{Backend: NewNull(1<<20, 0xff)})
	c := dial(t, ts, ClientOptions{})
	if _, err := c.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	effs, err := ts.srv.SetSocketBuffer(SendBuf, 64<<10)
	if err != nil || len(effs) != 1 {
		t.Fatalf("SetSocketBuffer: %v %v", effs, err)
	}
	_, probe, err := ProbeSocketBuffer("unix", SendBuf, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if effs[0] != probe {
		t.Fatalf("effective %d, a fresh socket gives %d", effs[0], probe)
	}
	ci := ts.srv.Conns()
	if len(ci) != 1 || ci[0].SndBuf != probe {
		t.Fatalf("Conns %+v", ci)
	}
	def, _, _ := ProbeSocketBuffer("unix", SendBuf, 0)
	effs, _ = ts.srv.SetSocketBuffer(SendBuf, 0)
	if len(effs) != 1 || effs[0] != def {
		t.Fatalf("restore default: %v, want %d", effs, def)
	}
}

func TestManyConnections(t *testing.T) {
	ts := startServer(t, Export{Backend: NewPattern(16 << 20), ReadOnly: true})
	errs := testbin.Concurrently(8, func(i int) error {
		c := dial(t, ts, ClientOptions{})
		buf := make([]byte, 64<<10+13)
		for k := range 20 {
			off := int64((i*20+k)*4099) % (16<<20 - int64(len(buf)))
			if _, err := c.ReadAt(buf, off); err != nil {
				return err
			}
			if bad, ok := PatternCheck(off, buf); !ok {
				return fmt.Errorf("pattern mismatch at %d (read at %d)", bad, off)
			}
		}
		return nil
	})
	for _, err := range errs {
		t.Fatal(err)
	}
}

// rawConn is a hand-driven peer for the bad-peer tests.
type rawConn struct {
	t *testing.T
	net.Conn
}

func rawDial(t *testing.T, ts *testServer) *rawConn {
	t.Helper()
	r := rawDialBare(t, ts)
	t.Cleanup(func() { r.Close() })
	return r
}

func (r *rawConn) read(n int) []byte {
	r.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		r.t.Fatalf("read %d: %v", n, err)
	}
	return b
}

func (r *rawConn) greet(flags uint32) {
	r.t.Helper()
	g := r.read(18)
	if binary.BigEndian.Uint64(g) != magicNBD || binary.BigEndian.Uint64(g[8:]) != magicIHaveOpt {
		r.t.Fatalf("bad greeting % x", g)
	}
	r.Write(binary.BigEndian.AppendUint32(nil, flags))
}

func (r *rawConn) opt(opt uint32, data []byte) {
	b := binary.BigEndian.AppendUint64(nil, magicIHaveOpt)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	r.Write(append(b, data...))
}

func (r *rawConn) optReply() (opt, typ uint32, data []byte) {
	r.t.Helper()
	h := r.read(20)
	if binary.BigEndian.Uint64(h) != magicOptReply {
		r.t.Fatalf("bad option reply magic % x", h)
	}
	n := binary.BigEndian.Uint32(h[16:])
	return binary.BigEndian.Uint32(h[8:]), binary.BigEndian.Uint32(h[12:]), r.read(int(n))
}

func (r *rawConn) expectClosed() {
	r.t.Helper()
	b := make([]byte, 1)
	_, err := r.Read(b)
	if err == nil {
		r.t.Fatalf("connection still open")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.t.Fatalf("server did not close the connection")
	}
}

func goPayload(name string) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	p = append(p, name...)
	return binary.BigEndian.AppendUint16(p, 0)
}

// enter negotiates SR and GO on a raw connection.
func (r *rawConn) enter() {
	r.t.Helper()
	r.greet(clientFixedNewstyle | clientNoZeroes)
	r.opt(OptStructuredReply, nil)
	if _, typ, _ := r.optReply(); typ != RepAck {
		r.t.Fatalf("SR: %x", typ)
	}
	r.opt(OptGo, goPayload(""))
	for {
		_, typ, _ := r.optReply()
		if typ == RepAck {
			return
		}
		if typ != RepInfo {
			r.t.Fatalf("GO: %x", typ)
		}
	}
}

func (r *rawConn) request(typ, flags uint16, cookie, off uint64, n uint32, payload []byte) {
	var h [28]byte
	Request{Flags: flags, Type: typ, Cookie: cookie, Offset: off, Length: n}.Put(h[:])
	r.Write(append(h[:], payload...))
}

func (r *rawConn) simpleErrno(cookie uint64) Errno {
	r.t.Helper()
	h := r.read(16)
	if binary.BigEndian.Uint32(h) != magicSimpleReply || binary.BigEndian.Uint64(h[8:]) != cookie {
		r.t.Fatalf("bad simple reply % x", h)
	}
	return Errno(binary.BigEndian.Uint32(h[4:]))
}

func TestBadPeers(t *testing.T) {
	ts := startServer(t, Export{Name: "disk", Backend: NewMemory(1 << 20)})
	// A well-behaved client stays connected throughout and must keep working.
	good := dial(t, ts, ClientOptions{Export: "disk"})

	t.Run("truncated handshake", func(t *testing.T) {
		r := rawDial(t, ts)
		r.read(18)
		r.Write([]byte{0, 0}) // half of the client flags, then gone
		r.Close()
	})
	t.Run("bad client flags", func(t *testing.T) {
		r := rawDial(t, ts)
		r.greet(1 << 7)
		r.expectClosed()
	})
	t.Run("huge option length", func(t *testing.T) {
		r := rawDial(t, ts)
		r.greet(clientFixedNewstyle)
		b := binary.BigEndian.AppendUint64(nil, magicIHaveOpt)
		b = binary.BigEndian.AppendUint32(b, OptGo)
		b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
		r.Write(b)
		if _, typ, _ := r.optReply(); typ != RepErrTooBig {
			t.Fatalf("reply %x, want ERR_TOO_BIG", typ)
		}
		r.expectClosed()
	})
	t.Run("bad option magic", func(t *testing.T) {
		r := rawDial(t, ts)
		r.greet(clientFixedNewstyle)
		r.Write(make([]byte, 16))
		r.expectClosed()
	})
	t.Run("unknown option then GO", func(t *testing.T) {
		r := rawDial(t, ts)
		r.greet(clientFixedNewstyle)
		r.opt(99, []byte("junk"))
		if opt, typ, _ := r.optReply(); opt != 99 || typ != RepErrUnsup {
			t.Fatalf("unknown option: opt %d type %x", opt, typ)
		}
		for _, o := range []struct {
			what string
			opt  uint32
			data []byte
			want uint32
		}{
			{"missing export", OptGo, goPayload("nosuch"), RepErrUnknown},
			{"malformed INFO", OptInfo, []byte{0, 0, 0, 9, 'x'}, RepErrInvalid},
			{"STARTTLS", OptStartTLS, nil, RepErrUnsup},
			{"EXTENDED_HEADERS", OptExtendedHeaders, nil, RepErrUnsup},
			{"SET_META_CONTEXT without SR", OptSetMetaContext, []byte{0, 0, 0, 0, 0, 0, 0, 0}, RepErrInvalid},
			{"LIST with data", OptList, []byte("x"), RepErrInvalid},
			{"ABORT", OptAbort, nil, RepAck},
		} {
			r.opt(o.opt, o.data)
			if _, typ, _ := r.optReply(); typ != o.want {
				t.Fatalf("%s: %x", o.what, typ)
			}
		}
		r.expectClosed()
	})
	t.Run("export name unknown closes", func(t *testing.T) {
		r := rawDial(t, ts)
		r.greet(clientFixedNewstyle)
		r.opt(OptExportName, []byte("nosuch"))
		r.expectClosed()
	})
	t.Run("export name without no-zeroes pads", func(t *testing.T) {
		r := rawDial(t, ts)
		r.greet(clientFixedNewstyle)
		r.opt(OptExportName, []byte("disk"))
		b := r.read(10 + 124)
		if binary.BigEndian.Uint64(b) != 1<<20 || !bytes.Equal(b[10:], make([]byte, 124)) {
			t.Fatalf("EXPORT_NAME reply % x", b[:10])
		}
	})
	t.Run("bad request magic", func(t *testing.T) {
		r := rawDial(t, ts)
		r.enter()
		r.Write(make([]byte, 28))
		r.expectClosed()
	})
	t.Run("requests answered with errno", func(t *testing.T) {
		r := rawDial(t, ts)
		r.enter()
		r.request(77, 0, 1, 0, 0, nil)
		if e := r.simpleErrno(1); e != EINVAL {
			t.Fatalf("unknown command: %v", e)
		}
		r.request(CmdFlush, 1<<12, 2, 0, 0, nil)
		if e := r.simpleErrno(2); e != EINVAL {
			t.Fatalf("unknown flags: %v", e)
		}
		r.request(CmdWrite, 0, 3, ^uint64(0)-100, 512, make([]byte, 512))
		if e := r.simpleErrno(3); e != ENOSPC {
			t.Fatalf("overflowing write: %v", e)
		}
		// READ errors come as structured ERROR chunks once SR is on.
		r.request(CmdRead, 0, 4, 1<<20, 512, nil)
		h := r.read(20)
		ch, err := ParseChunkHeader(h)
		if err != nil || ch.Type != ChunkError || ch.Cookie != 4 || ch.Flags&ChunkFlagDone == 0 {
			t.Fatalf("read past end: %+v %v", ch, err)
		}
		ec, err := ParseErrorChunk(ch.Type, r.read(int(ch.Length)))
		if err != nil || ec.Errno != EINVAL {
			t.Fatalf("read past end errno %+v %v", ec, err)
		}
		r.request(CmdDisc, 0, 0, 0, 0, nil)
		r.expectClosed()
	})
	t.Run("close mid write payload", func(t *testing.T) {
		r := rawDial(t, ts)
		r.enter()
		r.request(CmdWrite, 0, 1, 0, 1<<20, make([]byte, 1000))
		r.Close()
	})
	t.Run("idle in handshake times out", func(t *testing.T) {
		// startServer has the default (long) handshake timeout; this case
		// gets its own server with a short one. The bound is well below
		// the default, so the test still fails if the timeout is not applied.
		const handshakeTimeout = time.Second
		short := startCustomServer(t, &Server{
			Exports:          []Export{{Name: "disk", Backend: NewMemory(1 << 20)}},
			HandshakeTimeout: handshakeTimeout,
		})
		r := rawDial(t, short)
		r.read(18)
		start := time.Now()
		bound := handshakeTimeout + 3*time.Second // generous: -race and a busy machine
		r.SetDeadline(start.Add(bound + 2*time.Second))
		r.expectClosed()
		if d := time.Since(start); d > bound {
			t.Fatalf("closed after %v, want within %v (handshake timeout %v)", d, bound, handshakeTimeout)
		}
	})

	if _, err := good.WriteAt([]byte("alive"), 0); err != nil {
		t.Fatalf("good client broken by bad peers: %v", err)
	}
	got := make([]byte, 5)
	if _, err := good.ReadAt(got, 0); err != nil || string(got) != "alive" {
		t.Fatalf("good client: %q %v", got, err)
	}
}

func TestListAndInfo(t *testing.T) {
	ts := startServer(t,
		Export{Name: "a", Description: "first", Backend: NewMemory(1 << 20)},
		Export{Name: "b", Backend: NewNull(2<<20, 0)})
	r := rawDial(t, ts)
	r.greet(clientFixedNewstyle | clientNoZeroes)
	r.opt(OptList, nil)
	var names []string
	for {
		_, typ, data := r.optReply()
		if typ == RepAck {
			break
		}
		n := binary.BigEndian.Uint32(data)
		names = append(names, string(data[4:4+n])+"|"+string(data[4+n:]))
	}
	if len(names) != 2 || names[0] != "a|first" || names[1] != "b|" {
		t.Fatalf("LIST: %q", names)
	}
	p := binary.BigEndian.AppendUint32(nil, 1)
	p = append(p, 'b')
	p = binary.BigEndian.AppendUint16(p, 3)
	p = binary.BigEndian.AppendUint16(p, InfoName)
	p = binary.BigEndian.AppendUint16(p, InfoBlockSize)
	p = binary.BigEndian.AppendUint16(p, 0x777)
	r.opt(OptInfo, p)
	got := map[uint16][]byte{}
	for {
		_, typ, data := r.optReply()
		if typ == RepAck {
			break
		}
		got[binary.BigEndian.Uint16(data)] = data[2:]
	}
	if string(got[InfoName]) != "b" || binary.BigEndian.Uint64(got[InfoExport]) != 2<<20 ||
		binary.BigEndian.Uint32(got[InfoBlockSize][8:]) != MaxPayload {
		t.Fatalf("INFO: %v", got)
	}
}

func TestServerStopsWithOpenConnections(t *testing.T) {
	sock := filepath.Join(testbin.ShortDir(t), "s.sock")
	ln, err := ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Exports: []Export{{Backend: NewNull(1<<20, 0xff)}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c, err := Dial(context.Background(), URI{Transport: "unix", Socket: sock}, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	if err := within(t, done, 5*time.Second, "Serve returning"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadAt(make([]byte, 512), 0); err == nil {
		t.Fatal("read after shutdown succeeded")
	}
}

func TestListenUnixRefusesNonSocket(t *testing.T) {
	p := filepath.Join(testbin.ShortDir(t), "file")
	if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ListenUnix(p); err == nil {
		t.Fatal("ListenUnix replaced a regular file")
	}
	if b, _ := os.ReadFile(p); string(b) != "precious" {
		t.Fatal("file changed")
	}
	s := filepath.Join(filepath.Dir(p), "s.sock")
	ln, err := ListenUnix(s)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Stat(s)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v %v", fi.Mode(), err)
	}
	if _, err := ListenUnix(s); err == nil {
		t.Fatal("ListenUnix took over a live socket")
	}
}
