package nbd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// Fuzz targets for the wire parsers and for a whole server and a whole
// client (issue 6). Their seed corpora (f.Add and testdata/fuzz) run in the
// ordinary `go test`; `go test -run XXX -fuzz FuzzName ./nbd/` explores.

func optionBytes(opt uint32, data []byte) []byte {
	return append(optHeader(opt, uint32(len(data))), data...)
}

// appendString appends s behind its 32-bit length, as option data
// carries strings (cutString reads them).
func appendString(p []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint32(p, uint32(len(s))), s...)
}

func metaPayload(export string, queries ...string) []byte {
	p := appendString(nil, export)
	p = binary.BigEndian.AppendUint32(p, uint32(len(queries)))
	for _, q := range queries {
		p = appendString(p, q)
	}
	return p
}

func infoPayload(name string, infos ...uint16) []byte {
	p := appendString(nil, name)
	p = binary.BigEndian.AppendUint16(p, uint16(len(infos)))
	for _, i := range infos {
		p = binary.BigEndian.AppendUint16(p, i)
	}
	return p
}

func FuzzParseOptionHeader(f *testing.F) {
	f.Add(optHeader(OptGo, 0))
	f.Add(optHeader(OptInfo, 0xFFFFFFFF))
	f.Add(optHeader(0xFFFFFFFF, 7)[:15])
	f.Add(make([]byte, optHeaderSize))
	f.Add(append(optHeader(OptList, 0), 1, 2, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := len(b) >= optHeaderSize && binary.BigEndian.Uint64(b) == magicIHaveOpt
		roundTripHeader(t, "header", b, optHeaderSize, valid, ParseOptionHeader, func(oh OptionRequest) []byte {
			return optHeader(oh.Option, oh.Length)
		})
	})
}

// roundTripHeader checks a fixed header's parser on b: a header of the
// right size and magic (valid) is never refused, and what it parses
// encodes back to the bytes it came from.
func roundTripHeader[H any](t *testing.T, what string, b []byte, size int, valid bool, parse func([]byte) (H, error), encode func(H) []byte) {
	t.Helper()
	h, err := parse(b)
	if err != nil {
		if valid {
			t.Fatalf("valid %s % x refused: %v", what, b[:size], err)
		}
		return
	}
	if got := encode(h); !bytes.Equal(got, b[:size]) {
		t.Fatalf("% x parsed to %+v, which encodes as % x", b[:size], h, got)
	}
}

func FuzzParseInfoRequest(f *testing.F) {
	f.Add(infoPayload(""))
	f.Add(infoPayload("disk", InfoBlockSize))
	f.Add(infoPayload("disk", InfoName, InfoDescription, InfoBlockSize, 0x777))
	f.Add(infoPayload(string(make([]byte, maxStringLength+1))))
	f.Add([]byte{0, 0, 0, 9, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0xff, 0xff})
	f.Add(append(infoPayload("a", 1), 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTripOptionData(t, data, ParseInfoRequest, func(ir InfoRequest) ([]byte, []string) {
			return infoPayload(ir.Name, ir.Infos...), []string{ir.Name}
		})
	})
}

// roundTripOptionData checks an option data parser on data: what it
// accepts holds no string over maxStringLength and encodes back to exactly
// the bytes it came from (encode gives the bytes and the strings).
func roundTripOptionData[R any](t *testing.T, data []byte, parse func([]byte) (R, error), encode func(R) ([]byte, []string)) {
	t.Helper()
	r, err := parse(data)
	if err != nil {
		return
	}
	got, strs := encode(r)
	for _, s := range strs {
		if len(s) > maxStringLength {
			t.Fatalf("string of %d bytes accepted in %+v", len(s), r)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("% x parsed to %+v, which encodes as % x", data, r, got)
	}
}

func FuzzParseMetaContextRequest(f *testing.F) {
	f.Add(metaPayload(""))
	f.Add(metaPayload("", MetaContextBaseAllocation))
	f.Add(metaPayload("disk", "base:", "qemu:dirty-bitmap:x", ""))
	f.Add(metaPayload("", string(make([]byte, maxStringLength+1))))
	f.Add([]byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	f.Add(append(metaPayload("", "x"), 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTripOptionData(t, data, ParseMetaContextRequest, func(mr MetaContextRequest) ([]byte, []string) {
			return metaPayload(mr.Export, mr.Queries...), append([]string{mr.Export}, mr.Queries...)
		})
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add(reqBytes(CmdRead, 0, 1, 0, 4096))
	f.Add(reqBytes(CmdWrite, CmdFlagFUA, ^uint64(0), ^uint64(0), 0xFFFFFFFF))
	f.Add(reqBytes(CmdDisc, 0, 0, 0, 0)[:27])
	f.Add(make([]byte, requestSize))
	f.Add(append(reqBytes(0xFFFF, 0xFFFF, 7, 7, 7), 0xAA))
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := len(b) >= requestSize && binary.BigEndian.Uint32(b) == magicRequest
		roundTripHeader(t, "request", b, requestSize, valid, ParseRequest, func(r Request) []byte {
			return reqBytes(r.Type, r.Flags, r.Cookie, r.Offset, r.Length)
		})
	})
}

func FuzzParseChunkHeader(f *testing.F) {
	f.Add(chunkBytes(ChunkFlagDone, ChunkOffsetData, 1, make([]byte, 9)))
	f.Add(chunkBytes(0, ChunkError, ^uint64(0), nil))
	f.Add(simpleReplyBytes(EIO, 1))
	f.Add(make([]byte, chunkHeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := len(b) >= chunkHeaderSize && binary.BigEndian.Uint32(b) == magicStructReply
		roundTripHeader(t, "chunk header", b, chunkHeaderSize, valid, ParseChunkHeader, func(ch Chunk) []byte {
			got := make([]byte, chunkHeaderSize)
			putChunkHeader(got, ch.Flags, ch.Type, ch.Cookie, ch.Length)
			return got
		})
	})
}

func FuzzParseErrorChunk(f *testing.F) {
	f.Add(ChunkError, errorPayload(EIO, "disk on fire"))
	f.Add(ChunkError, errorPayload(0, ""))
	f.Add(ChunkErrorOffset, append(errorPayload(ENOSPC, "x"), make([]byte, 8)...))
	f.Add(ChunkErrorOffset, errorPayload(ENOSPC, "x"))
	f.Add(uint16(0x8003), append(errorPayload(EINVAL, "future"), 1, 2, 3))
	f.Add(ChunkError, []byte{0, 0, 0, 5, 0xff, 0xff, 'a'})
	f.Add(ChunkError, []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, typ uint16, p []byte) {
		ec, err := ParseErrorChunk(typ, p)
		if err != nil {
			return
		}
		if ec.Errno == 0 {
			t.Fatal("error chunk parsed as success (errno 0)")
		}
		want := 6 + len(ec.Message)
		if ec.HasOffset {
			want += 8
		}
		if want != len(p) || ec.HasOffset != (typ == ChunkErrorOffset) {
			t.Fatalf("type %#x % x parsed to %+v", typ, p, ec)
		}
		if ec.Message != string(p[6:6+len(ec.Message)]) {
			t.Fatalf("message %q from % x", ec.Message, p)
		}
	})
}

func FuzzParseBlockStatus(f *testing.F) {
	bs := statusPayload
	f.Add(bs(1, 4096, 0))
	f.Add(bs(0, 512, StateHole|StateZero, 0xFFFFFFFF, 0))
	f.Add(bs(1))
	f.Add(bs(1, 4096))
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, p []byte) {
		id, exts, err := ParseBlockStatus(p)
		if err != nil {
			return
		}
		if len(exts) == 0 || len(p) != 4+8*len(exts) || id != binary.BigEndian.Uint32(p) {
			t.Fatalf("% x parsed to %d %+v", p, id, exts)
		}
		for i, e := range exts {
			if e.Length != uint64(binary.BigEndian.Uint32(p[4+8*i:])) || e.Flags != binary.BigEndian.Uint32(p[8+8*i:]) {
				t.Fatalf("extent %d %+v from % x", i, e, p)
			}
		}
	})
}

// Whole-server fuzzing: arbitrary bytes, sent after a prefix chosen by mode,
// to a real Server over a socket pair.
const (
	srvFromStart   = iota // the bytes are the whole client side
	srvAfterFlags         // after valid client flags
	srvSimple             // in transmission, simple replies
	srvStructured         // in transmission, structured replies
	srvBlockStatus        // in transmission, SR and base:allocation
	srvModes
)

func serverFuzzPrefix(mode uint8) []byte {
	mode %= srvModes
	if mode == srvFromStart {
		return nil
	}
	p := binary.BigEndian.AppendUint32(nil, clientFixedNewstyle|clientNoZeroes)
	if mode == srvAfterFlags {
		return p
	}
	if mode >= srvStructured {
		p = append(p, optionBytes(OptStructuredReply, nil)...)
	}
	if mode == srvBlockStatus {
		p = append(p, optionBytes(OptSetMetaContext, metaPayload("", MetaContextBaseAllocation))...)
	}
	return append(p, optionBytes(OptGo, infoPayload("", InfoBlockSize))...)
}

const fuzzServerBound = 10 * time.Second

func FuzzServer(f *testing.F) {
	fl := binary.BigEndian.AppendUint32(nil, clientFixedNewstyle|clientNoZeroes)
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	f.Add(uint8(srvFromStart), cat(fl, optionBytes(OptStructuredReply, nil), optionBytes(OptGo, infoPayload("")), reqBytes(CmdRead, 0, 1, 0, 512)))
	f.Add(uint8(srvFromStart), cat(binary.BigEndian.AppendUint32(nil, 0xFFFFFFFF)))
	f.Add(uint8(srvFromStart), []byte{0, 0})
	f.Add(uint8(srvAfterFlags), cat(optionBytes(OptList, nil), optionBytes(OptInfo, infoPayload("ro", InfoName, InfoDescription, InfoBlockSize)),
		optionBytes(OptListMetaContext, metaPayload("", "base:", "qemu:")), optionBytes(OptAbort, nil)))
	f.Add(uint8(srvAfterFlags), cat(optionBytes(OptExportName, []byte("ro")), reqBytes(CmdRead, 0, 1, 0, 512), reqBytes(CmdWrite, 0, 2, 0, 512)))
	f.Add(uint8(srvAfterFlags), cat(optionBytes(OptSetMetaContext, metaPayload("", MetaContextBaseAllocation)), optionBytes(OptStartTLS, nil),
		optionBytes(OptExtendedHeaders, nil), optionBytes(99, []byte("junk")), optionBytes(OptGo, infoPayload("nosuch"))))
	f.Add(uint8(srvAfterFlags), optHeader(OptGo, 0xFFFFFFFF))
	f.Add(uint8(srvAfterFlags), optionBytes(OptGo, []byte{0, 0, 0, 9, 'x'}))
	f.Add(uint8(srvSimple), cat(reqBytes(CmdWrite, CmdFlagFUA, 1, 512, 1024), bytes.Repeat([]byte{0xab}, 1024), reqBytes(CmdRead, 0, 2, 0, 4096),
		reqBytes(CmdFlush, 0, 3, 0, 0), reqBytes(CmdTrim, 0, 4, 0, 512), reqBytes(CmdWriteZeroes, CmdFlagNoHole, 5, 0, 4096),
		reqBytes(CmdCache, 0, 6, 0, 4096), reqBytes(CmdDisc, 0, 0, 0, 0)))
	f.Add(uint8(srvSimple), cat(reqBytes(CmdRead, CmdFlagDF, 1, 0, 512), reqBytes(42, 0, 2, 0, 0), reqBytes(CmdRead, 0, 3, ^uint64(0), 2)))
	f.Add(uint8(srvStructured), cat(reqBytes(CmdRead, 0, 1, 0, 0), reqBytes(CmdRead, CmdFlagDF, 2, 1000, 1000), reqBytes(CmdRead, 0, 3, 1<<20, 1),
		reqBytes(CmdWriteZeroes, CmdFlagFastZero, 4, 0, 1<<20), reqBytes(CmdBlockStatus, 0, 5, 0, 4096)))
	f.Add(uint8(srvStructured), cat(reqBytes(CmdWrite, 0, 1, 0, 33<<20), make([]byte, 100)))
	f.Add(uint8(srvStructured), cat(reqBytes(CmdWrite, 0xFFFF, 1, 0, 64), make([]byte, 64), make([]byte, requestSize)))
	f.Add(uint8(srvBlockStatus), cat(reqBytes(CmdWrite, 0, 1, 4096, 5000), make([]byte, 5000), reqBytes(CmdBlockStatus, 0, 2, 0, 1<<20),
		reqBytes(CmdBlockStatus, CmdFlagReqOne, 3, 1, 1<<20-1), reqBytes(CmdTrim, 0, 4, 0, 4096), reqBytes(CmdBlockStatus, 0, 5, 4095, 2)))
	f.Add(uint8(srvBlockStatus), cat(reqBytes(CmdBlockStatus, 0, 1, 0, 0), reqBytes(CmdBlockStatus, 0, 2, 1<<20, 1)))

	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		srv := &Server{
			Exports: []Export{
				{Name: "", Backend: NewMemory(1 << 20)},
				{Name: "ro", Description: "pattern", Backend: NewPattern(1 << 20), ReadOnly: true},
			},
			HandshakeTimeout: fuzzServerBound,
			MaxInFlightBytes: 4 << 20,
		}
		cli, end := socketPair(t)
		defer cli.Close()
		ln := newConnListener()
		ln.add(end)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()
		// Everything the server says is read and dropped; the end of it
		// is the server closing the connection.
		closed := make(chan struct{})
		var got int64
		go func() { got, _ = io.Copy(io.Discard, cli); close(closed) }()

		cli.SetWriteDeadline(time.Now().Add(fuzzServerBound))
		_, err := cli.Write(append(serverFuzzPrefix(mode), data...))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("server stopped reading for %v without closing", fuzzServerBound)
		}
		cli.CloseWrite()
		select {
		case <-closed:
		case <-time.After(fuzzServerBound):
			t.Fatalf("server did not close within %v of the client's EOF", fuzzServerBound)
		}
		cancel()
		if err := within(t, served, fuzzServerBound, "Serve returning"); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if st := srv.Stats(); st.Open != 0 {
			t.Fatalf("%d connections open after Serve returned", st.Open)
		}
		if got < greetingSize {
			t.Fatalf("server sent %d bytes, not even the greeting", got)
		}
	})
}

// Whole-client fuzzing: a fake server negotiates (or, in mode 0, sends the
// bytes as its handshake), waits for the client's requests, then answers
// with arbitrary bytes and hangs up. Every request must complete within a
// bound and Close must return.
const (
	cliHandshake = iota
	cliSimple
	cliStructured
	cliModes
)

// fuzzClientOps are the requests the client sends in transmission; their
// cookies are 1, 2, … in this order.
var fuzzClientOps = []opSpec{
	{cmd: CmdRead, off: 0, n: 4096},
	{cmd: CmdWrite, off: 512, n: 512},
	{cmd: CmdFlush},
	{cmd: CmdRead, off: 100, n: 1},
	{cmd: CmdBlockStatus, off: 0, n: 8192},
	{cmd: CmdWriteZeroes, off: 0, n: 4096, flag: CmdFlagNoHole},
}

func fuzzClientRequestBytes() int {
	n := 0
	for _, s := range fuzzClientOps {
		n += requestSize
		if s.cmd == CmdWrite {
			n += s.n
		}
	}
	return n
}

const fuzzClientBound = 10 * time.Second

func FuzzClient(f *testing.F) {
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	bsp := func(id uint32, ext ...uint32) []byte {
		p := binary.BigEndian.AppendUint32(nil, id)
		for _, e := range ext {
			p = binary.BigEndian.AppendUint32(p, e)
		}
		return p
	}
	hole := func(off uint64, n uint32) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, off), n)
	}
	// Every request answered properly.
	f.Add(uint8(cliStructured), cat(
		offsetData(0, 1, 0, make([]byte, 2048)), chunkBytes(ChunkFlagDone, ChunkOffsetHole, 1, hole(2048, 2048)),
		simpleReplyBytes(0, 2), simpleReplyBytes(0, 3), offsetData(ChunkFlagDone, 4, 100, []byte{7}),
		chunkBytes(ChunkFlagDone, ChunkBlockStatus, 5, bsp(1, 4096, 0, 4096, StateHole|StateZero)), simpleReplyBytes(0, 6)))
	f.Add(uint8(cliSimple), cat(simpleReplyBytes(0, 1), make([]byte, 4096), simpleReplyBytes(0, 2), simpleReplyBytes(0, 3),
		simpleReplyBytes(0, 4), []byte{9}, simpleReplyBytes(EINVAL, 5), simpleReplyBytes(0, 6)))
	// Errors and out-of-order replies.
	f.Add(uint8(cliStructured), cat(simpleReplyBytes(ENOSPC, 6), chunkBytes(ChunkFlagDone, ChunkError, 1, errorPayload(EIO, "bad")),
		chunkBytes(0, ChunkErrorOffset, 4, append(errorPayload(EIO, ""), make([]byte, 8)...)), chunkBytes(ChunkFlagDone, ChunkNone, 4, nil),
		chunkBytes(ChunkFlagDone, 0x8123, 5, errorPayload(EPERM, "new error type")), simpleReplyBytes(EPERM, 3), simpleReplyBytes(0, 2)))
	// Broken replies.
	f.Add(uint8(cliStructured), offsetData(ChunkFlagDone, 1, 4000, make([]byte, 200)))
	f.Add(uint8(cliStructured), chunkBytes(ChunkFlagDone, ChunkOffsetData, 1, make([]byte, 8)))
	f.Add(uint8(cliStructured), cat(simpleReplyBytes(0, 1), make([]byte, 4096)))
	f.Add(uint8(cliStructured), chunkBytes(ChunkFlagDone, ChunkBlockStatus, 5, []byte{1, 2, 3}))
	f.Add(uint8(cliSimple), cat(simpleReplyBytes(0, 1), make([]byte, 100)))
	f.Add(uint8(cliSimple), offsetData(ChunkFlagDone, 1, 0, make([]byte, 4096)))
	f.Add(uint8(cliSimple), simpleReplyBytes(0, 99))
	f.Add(uint8(cliSimple), []byte("garbage!"))
	// Handshakes.
	g := binary.BigEndian.AppendUint64(nil, magicNBD)
	g = binary.BigEndian.AppendUint64(g, magicIHaveOpt)
	g = binary.BigEndian.AppendUint16(g, flagFixedNewstyle|flagNoZeroes)
	exp := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint16(nil, InfoExport), 1<<20)
	exp = binary.BigEndian.AppendUint16(exp, FlagHasFlags|FlagSendFlush)
	bsz := binary.BigEndian.AppendUint16(nil, InfoBlockSize)
	bsz = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(bsz, 1), 4096), 32<<20)
	meta := append(binary.BigEndian.AppendUint32(nil, 0), MetaContextBaseAllocation...)
	f.Add(uint8(cliHandshake), cat(g, fakeOptReply(OptStructuredReply, RepAck, nil),
		fakeOptReply(OptSetMetaContext, RepMetaContext, meta), fakeOptReply(OptSetMetaContext, RepAck, nil),
		fakeOptReply(OptGo, RepInfo, bsz), fakeOptReply(OptGo, RepInfo, exp), fakeOptReply(OptGo, RepAck, nil), simpleReplyBytes(0, 1)))
	f.Add(uint8(cliHandshake), cat(g, fakeOptReply(OptStructuredReply, RepErrUnsup, nil), fakeOptReply(OptGo, RepErrUnsup, nil),
		binary.BigEndian.AppendUint64(nil, 1<<20), []byte{0, 1}))
	f.Add(uint8(cliHandshake), cat(g[:16], []byte{0, 0}))
	f.Add(uint8(cliHandshake), cat(g, fakeOptReply(OptStructuredReply, RepAck, nil), fakeOptReply(OptGo, RepErrUnknown, []byte("no such export"))))
	f.Add(uint8(cliHandshake), cat(g, fakeOptReply(OptGo, RepAck, nil)))

	reqLen := fuzzClientRequestBytes()
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		mode %= cliModes
		cli, end := socketPair(t)
		defer end.Close()
		end.SetDeadline(time.Now().Add(2 * fuzzClientBound))
		srvDone := make(chan struct{})
		go func() {
			defer close(srvDone)
			if mode == cliHandshake {
				// The bytes are the server's whole side.
				go io.Copy(io.Discard, end)
				end.Write(data)
				end.CloseWrite()
				return
			}
			if err := fakeHandshake(end, mode == cliStructured, 1<<20); err != nil {
				return
			}
			// Wait for every request, so the replies cannot come before
			// the requests they answer, then answer with the bytes.
			if _, err := io.CopyN(io.Discard, end, int64(reqLen)); err != nil {
				return
			}
			end.Write(data)
			end.CloseWrite()
			io.Copy(io.Discard, end) // until the client closes
		}()

		ctx, cancel := context.WithTimeout(context.Background(), fuzzClientBound)
		cl, err := NewClient(ctx, cli, ClientOptions{BlockStatus: true, HandshakeTimeout: fuzzClientBound})
		cancel()
		if err == nil && mode != cliHandshake {
			ops := make([]*Op, len(fuzzClientOps))
			for i, s := range fuzzClientOps {
				ops[i] = s.op()
				if err := cl.Start(ops[i]); err != nil {
					ops[i] = nil
				}
			}
			for _, op := range ops {
				if op != nil {
					waitTimeout(t, op, fuzzClientBound)
				}
			}
		}
		if cl != nil {
			if mode == cliHandshake {
				// Nothing more will come: the reader ends on EOF.
				op := NewOp()
				op.Cmd = CmdFlush
				if cl.Start(op) == nil {
					waitTimeout(t, op, fuzzClientBound)
				}
			}
			closed := make(chan struct{})
			go func() { cl.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(fuzzClientBound):
				t.Fatal("Close hung")
			}
		}
		select {
		case <-srvDone:
		case <-time.After(2 * fuzzClientBound):
			t.Fatal("fake server stuck")
		}
	})
}
