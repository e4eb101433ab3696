package sockdiag

import (
	"errors"
	"net/netip"
	"slices"
	"syscall"
	"testing"
)

func mem9(wmem, sndbuf uint32) []uint32 { return []uint32{0, 212992, wmem, sndbuf, 0, 0, 0, 0, 0} }

func TestParseUnixDiagDump(t *testing.T) {
	const seq = 7
	a := fakeUnix{ino: 100, peer: 101, cookie: Cookie{1, 2}, typ: TypeStream, state: StateEstablished,
		name: "/tmp/s\x00", rq: 0, wq: 148480, mem: mem9(148480, 212992)}
	b := fakeUnix{ino: 101, peer: 100, typ: TypeStream, state: StateEstablished, rq: 139784, mem: mem9(0, 212992)}
	abstract := fakeUnix{ino: 102, typ: TypeStream, state: StateListen, name: "\x00nbd", wq: 128, mem: mem9(0, 212992)[:8]}
	unknown := fakeUnix{ino: 103, typ: TypeDgram, state: StateClose, mem: mem9(0, 0),
		extra: append(nlAttr(200, []byte{1, 2, 3}), nlAttr(unixDiagUID|0x8000, u32s(0))...)}
	stale := nlMsg(sockDiagByFamily, nlmFMulti, seq-1, fakeUnix{ino: 999}.payload())

	var dgram []byte
	dgram = append(dgram, stale...)
	for _, u := range []fakeUnix{a, b, abstract, unknown} {
		dgram = append(dgram, nlMsg(sockDiagByFamily, nlmFMulti, seq, u.payload())...)
	}
	got, done, err := ParseUnixDiag(dgram, seq, nil)
	if err != nil || done {
		t.Fatalf("first datagram: done %v, err %v; want more to come and no error", done, err)
	}
	got, done, err = ParseUnixDiag(nlDone(seq), seq, got)
	if err != nil || !done {
		t.Fatalf("NLMSG_DONE: done %v, err %v", done, err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d sockets, want 4 (the stale message skipped): %+v", len(got), got)
	}
	s := got[0]
	if s.Inode != 100 || s.Peer != 101 || s.Cookie != (Cookie{1, 2}) || s.Name != "/tmp/s" ||
		!s.HasQueues || s.WQueue != 148480 || !s.Mem.Valid || s.Mem.Fields != 9 ||
		s.Mem.WmemAlloc != 148480 || s.Mem.Sndbuf != 212992 || s.Mem.Rcvbuf != 212992 {
		t.Errorf("socket 100 = %+v", s)
	}
	if got[1].RQueue != 139784 || got[1].Name != "" {
		t.Errorf("socket 101 = %+v", got[1])
	}
	if got[2].Name != "@nbd" || got[2].State != StateListen || got[2].Mem.Fields != 8 || got[2].Mem.Drops != 0 {
		t.Errorf("abstract listener = %+v", got[2])
	}
	if got[3].Inode != 103 || got[3].Type != TypeDgram {
		t.Errorf("socket with unknown attributes = %+v", got[3])
	}
}

func TestParseUnixDiagExact(t *testing.T) {
	u := fakeUnix{ino: 5, typ: TypeStream, state: StateEstablished, mem: mem9(1, 2)}
	got, done, err := ParseUnixDiag(nlMsg(sockDiagByFamily, 0, 3, u.payload()), 3, nil)
	if err != nil || !done || len(got) != 1 || got[0].Inode != 5 {
		t.Fatalf("single answer: %+v, done %v, err %v", got, done, err)
	}
}

func TestParseErrors(t *testing.T) {
	good := nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 1, mem: mem9(0, 1)}.payload())
	tests := []struct {
		name    string
		b       []byte
		wantIs  error
		wantErr bool
	}{
		{"ENOENT is gone", nlErr(1, -int32(syscall.ENOENT)), ErrGone, true},
		{"ESTALE is gone", nlErr(1, -int32(syscall.ESTALE)), ErrGone, true},
		{"EPERM", nlErr(1, -int32(syscall.EPERM)), syscall.EPERM, true},
		{"positive error code", nlErr(1, 5), ErrMalformed, true},
		{"ack", nlErr(1, 0), nil, false},
		{"short error", nlMsg(nlmsgError, 0, 1, []byte{1, 2}), ErrMalformed, true},
		{"dump error in DONE", nlMsg(nlmsgDone, nlmFMulti, 1, u32s(negErrno(syscall.EINTR))), syscall.EINTR, true},
		{"overrun", nlMsg(nlmsgOverrun, 0, 1, nil), ErrMalformed, true},
		{"short header", good[:10], ErrMalformed, true},
		{"truncated message", good[:len(good)-8], ErrMalformed, true},
		{"length below header", append(ne.AppendUint32(nil, 8), make([]byte, 12)...), ErrMalformed, true},
		{"short unix_diag_msg", nlMsg(sockDiagByFamily, nlmFMulti, 1, make([]byte, 10)), ErrMalformed, true},
		{"wrong family", nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 1, family: afInet}.payload()), ErrMalformed, true},
		{"truncated attribute", nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 1, mem: mem9(0, 1), truncatePayload: 30}.payload()), ErrMalformed, true},
		{"short meminfo", nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 1, mem: []uint32{1, 2}}.payload()), ErrMalformed, true},
		{"short peer", nlMsg(sockDiagByFamily, nlmFMulti, 1, fakeUnix{ino: 1, extra: nlAttr(unixDiagPeer, []byte{1})}.payload()), ErrMalformed, true},
		{"foreign message type", nlMsg(99, nlmFMulti, 1, nil), ErrMalformed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, done, err := ParseUnixDiag(tt.b, 1, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want one that is %v", err, tt.wantIs)
			}
			if tt.wantIs == syscall.EPERM && errors.Is(err, ErrGone) {
				t.Errorf("EPERM reported as gone")
			}
			if tt.name == "ack" && !done {
				t.Errorf("an acknowledgement must end the reply")
			}
		})
	}
}

func TestParseInetDiag(t *testing.T) {
	const seq = 9
	lo := netip.MustParseAddr("127.0.0.1")
	a := fakeTCP{family: afInet, state: StateEstablished, local: netip.AddrPortFrom(lo, 40000),
		remote: netip.AddrPortFrom(lo, 10809), cookie: Cookie{3, 4}, rq: 0, wq: 65536, ino: 500,
		mem: []uint32{0, 131072, 0, 87040, 4096, 70000, 0, 0, 0}, info: tcpInfoBytes(232, StateEstablished, 1000, 123456)}
	v6 := fakeTCP{family: afInet6, state: StateEstablished,
		local: netip.MustParseAddrPort("[::1]:5000"), remote: netip.MustParseAddrPort("[::1]:6000"), ino: 501,
		mem: []uint32{1, 2, 3, 4, 5, 6, 7, 8}, info: tcpInfoBytes(104, StateEstablished, 7, 8)}
	noExt := fakeTCP{family: afInet, state: StateListen, local: netip.AddrPortFrom(lo, 10809), ino: 502}
	var dgram []byte
	for _, s := range []fakeTCP{a, v6, noExt} {
		dgram = append(dgram, nlMsg(sockDiagByFamily, nlmFMulti, seq, s.payload())...)
	}
	dgram = append(dgram, nlDone(seq)...)
	got, done, err := ParseInetDiag(dgram, seq, nil)
	if err != nil || !done || len(got) != 3 {
		t.Fatalf("got %+v, done %v, err %v", got, done, err)
	}
	s := got[0]
	if s.Local != a.local || s.Remote != a.remote || s.Inode != 500 || s.Cookie != a.cookie ||
		s.WQueue != 65536 || s.Mem.WmemQueued != 70000 || s.Mem.Sndbuf != 87040 ||
		!s.Info.Valid || !s.Info.HasNotSent || s.Info.NotSentBytes != 1000 || !s.Info.HasBytesSent || s.Info.BytesSent != 123456 {
		t.Errorf("IPv4 socket = %+v", s)
	}
	if got[1].Local != v6.local || got[1].Remote != v6.remote || got[1].Info.HasNotSent || got[1].Info.HasBytesSent {
		t.Errorf("IPv6 socket with an old kernel's short tcp_info = %+v", got[1])
	}
	if got[2].Mem.Valid || got[2].Info.Valid {
		t.Errorf("socket without extensions = %+v", got[2])
	}
	if _, _, err := ParseInetDiag(nlMsg(sockDiagByFamily, nlmFMulti, seq, a.payload()[:60]), seq, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("short inet_diag_msg: err = %v", err)
	}
}

func TestRequestLayout(t *testing.T) {
	b := appendUnixRequest(nil, 42, 1234, Cookie{5, 6}, unixShowAll)
	if len(b) != nlmsgHdrLen+unixDiagReqLen || ne.Uint32(b[0:4]) != uint32(len(b)) ||
		ne.Uint16(b[4:6]) != sockDiagByFamily || ne.Uint16(b[6:8]) != nlmFRequest || ne.Uint32(b[8:12]) != 42 {
		t.Fatalf("unix exact request header = %x", b[:16])
	}
	p := b[16:]
	if p[0] != afUnix || ne.Uint32(p[4:8]) != allStates || ne.Uint32(p[8:12]) != 1234 ||
		ne.Uint32(p[12:16]) != unixShowAll || ne.Uint32(p[16:20]) != 5 || ne.Uint32(p[20:24]) != 6 {
		t.Fatalf("unix_diag_req = %x", p)
	}
	if d := appendUnixRequest(nil, 1, 0, NoCookie, 0); ne.Uint16(d[6:8]) != nlmFRequest|nlmFDump {
		t.Errorf("a dump request has flags %#x", ne.Uint16(d[6:8]))
	}
	k := tcpKey{family: afInet, local: netip.MustParseAddrPort("127.0.0.1:1"), remote: netip.MustParseAddrPort("127.0.0.2:258")}
	r := appendInetRequest(nil, 1, afInet, inetExt, 0x2, &k, Cookie{7, 8})
	if len(r) != nlmsgHdrLen+inetDiagReqLen {
		t.Fatalf("inet request is %d bytes", len(r))
	}
	q := r[16:]
	if q[0] != afInet || q[1] != ipprotoTCP || q[2] != inetExt || ne.Uint32(q[4:8]) != 2 ||
		!slices.Equal(q[8:12], []byte{0, 1, 1, 2}) || !slices.Equal(q[12:16], []byte{127, 0, 0, 1}) ||
		!slices.Equal(q[28:32], []byte{127, 0, 0, 2}) || ne.Uint32(q[48:52]) != 7 || ne.Uint32(q[52:56]) != 8 {
		t.Fatalf("inet_diag_req_v2 = %x", q)
	}
}

// negErrno is -errno as the u32 the kernel writes.
func negErrno(e syscall.Errno) uint32 {
	v := -int32(e)
	return uint32(v)
}
