package sockdiag

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// TestXNULayout: the reader's offsets are those of the declarations.
func TestXNULayout(t *testing.T) {
	L := socketFdinfo
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"size", xnuFdinfoSize, L.size},
		{"soi_so", xnuOffSo, L.off("psi", "soi_so")},
		{"soi_type", xnuOffType, L.off("psi", "soi_type")},
		{"soi_family", xnuOffFamily, L.off("psi", "soi_family")},
		{"soi_options", xnuOffOptions, L.off("psi", "soi_options")},
		{"soi_state", xnuOffState, L.off("psi", "soi_state")},
		{"soi_rcv.sbi_cc", xnuOffRcv, L.off("psi", "soi_rcv", "sbi_cc")},
		{"soi_rcv.sbi_hiwat", xnuOffRcv + 4, L.off("psi", "soi_rcv", "sbi_hiwat")},
		{"soi_snd.sbi_cc", xnuOffSnd, L.off("psi", "soi_snd", "sbi_cc")},
		{"soi_snd.sbi_hiwat", xnuOffSnd + 4, L.off("psi", "soi_snd", "sbi_hiwat")},
		{"soi_kind", xnuOffKind, L.off("psi", "soi_kind")},
		{"unsi_conn_so", xnuOffConnSo, L.off("psi", "soi_proto", "pri_un", "unsi_conn_so")},
		{"insi_fport", xnuOffFport, L.off("psi", "soi_proto", "pri_in", "insi_fport")},
		{"insi_lport", xnuOffLport, L.off("psi", "soi_proto", "pri_in", "insi_lport")},
		{"insi_vflag", xnuOffVflag, L.off("psi", "soi_proto", "pri_in", "insi_vflag")},
		{"insi_faddr", xnuOffFaddr, L.off("psi", "soi_proto", "pri_in", "insi_faddr")},
		{"insi_laddr", xnuOffLaddr, L.off("psi", "soi_proto", "pri_in", "insi_laddr")},
		{"tcpsi_ini", xnuOffProto, L.off("psi", "soi_proto", "pri_tcp", "tcpsi_ini")},
		{"tcpsi_state", xnuOffTCPState, L.off("psi", "soi_proto", "pri_tcp", "tcpsi_state")},
	} {
		if c.got != c.want {
			t.Errorf("%s: the reader has %d, the declarations give %d", c.name, c.got, c.want)
		}
	}
}

// fdinfo is one socket as the double's kernel holds it.
type fdinfo struct {
	so, connSo                       uint64
	family, typ, kind                uint32
	listening                        bool
	rcvCC, rcvHiwat, sndCC, sndHiwat uint32
	local, remote                    netip.AddrPort
}

// encode lays the socket out as XNU fills a socket_fdinfo, by the
// declarations' offsets.
func (f fdinfo) encode() []byte {
	L, le := socketFdinfo, binary.LittleEndian
	b := make([]byte, L.size)
	put32 := func(v uint32, path ...string) { le.PutUint32(b[L.off(path...):], v) }
	le.PutUint64(b[L.off("psi", "soi_so"):], f.so)
	put32(f.typ, "psi", "soi_type")
	put32(f.family, "psi", "soi_family")
	put32(f.kind, "psi", "soi_kind")
	if f.listening {
		le.PutUint16(b[L.off("psi", "soi_options"):], 0x0002)
	} else {
		le.PutUint16(b[L.off("psi", "soi_state"):], 0x0002)
	}
	put32(f.rcvCC, "psi", "soi_rcv", "sbi_cc")
	put32(f.rcvHiwat, "psi", "soi_rcv", "sbi_hiwat")
	put32(f.sndCC, "psi", "soi_snd", "sbi_cc")
	put32(f.sndHiwat, "psi", "soi_snd", "sbi_hiwat")
	switch f.family {
	case xnuAFUnix:
		le.PutUint64(b[L.off("psi", "soi_proto", "pri_un", "unsi_conn_so"):], f.connSo)
		return b
	case xnuAFInet:
	default:
		return b
	}
	for _, ap := range []*netip.AddrPort{&f.local, &f.remote} {
		if !ap.IsValid() {
			*ap = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
		}
	}
	in := []string{"psi", "soi_proto", "pri_in"}
	port := func(p uint16) uint32 { return uint32(p>>8 | p<<8) } // network order in an int
	put32(port(f.local.Port()), append(in, "insi_lport")...)
	put32(port(f.remote.Port()), append(in, "insi_fport")...)
	b[L.off(append(in, "insi_vflag")...)] = xnuINIIPv4
	a4, r4 := f.local.Addr().As4(), f.remote.Addr().As4()
	copy(b[L.off(append(in, "insi_laddr", "ina_46", "i46a_addr4")...):], a4[:])
	copy(b[L.off(append(in, "insi_faddr", "ina_46", "i46a_addr4")...):], r4[:])
	put32(xnuTSIEstab, "psi", "soi_proto", "pri_tcp", "tcpsi_state")
	return b
}

func TestParseSocketFdinfo(t *testing.T) {
	u := fdinfo{so: 0xffffff80_12345678, connSo: 0xffffff80_9abcdef0, family: xnuAFUnix, typ: 1, kind: xnuKindUn,
		rcvCC: 10, rcvHiwat: 8192, sndCC: 0, sndHiwat: 4096}
	s, err := parseSocketFdinfo(u.encode())
	if err != nil || s.So != u.so || s.ConnSo != u.connSo || !s.Connected || s.Listening ||
		s.RcvCC != 10 || s.RcvHiwat != 8192 || s.SndHiwat != 4096 {
		t.Fatalf("unix: %+v, %v", s, err)
	}
	lo := netip.MustParseAddr("127.0.0.1")
	tcp := fdinfo{so: 7, family: xnuAFInet, typ: 1, kind: xnuKindTCP, sndCC: 60000, sndHiwat: 65536,
		local: netip.AddrPortFrom(lo, 10809), remote: netip.AddrPortFrom(lo, 50123)}
	if s, err := parseSocketFdinfo(tcp.encode()); err != nil || s.Local != tcp.local || s.Remote != tcp.remote ||
		s.TCPState != xnuTSIEstab || s.SndCC != 60000 {
		t.Fatalf("tcp: %+v, %v", s, err)
	}
	bad := u
	bad.kind = xnuKindTCP
	for name, b := range map[string][]byte{"short": u.encode()[:500], "long": append(u.encode(), 0),
		"a unix socket of kind TCP": bad.encode(), "no handle": fdinfo{family: xnuAFUnix, typ: 1, kind: xnuKindUn}.encode()} {
		if _, err := parseSocketFdinfo(b); !errors.Is(err, errXNULayout) {
			t.Errorf("%s: %v, want a layout error", name, err)
		}
	}
	if _, err := parseSocketFdinfo(fdinfo{so: 1, family: 32, typ: 3, kind: 6}.encode()); !errors.Is(err, ErrNotSampled) {
		t.Errorf("a kernel control socket: %v", err)
	}
}

func FuzzParseSocketFdinfo(f *testing.F) {
	f.Add(fdinfo{so: 1, connSo: 2, family: xnuAFUnix, typ: 1, kind: xnuKindUn}.encode())
	f.Add(fdinfo{so: 1, family: xnuAFInet, typ: 1, kind: xnuKindTCP}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSocketFdinfo(b)
		if err == nil && (s.So == 0 || len(b) != xnuFdinfoSize) {
			t.Fatalf("took %+v from %d bytes", s, len(b))
		}
	})
}

// fakeXNU is a double of XNU's proc_info: processes, their descriptors,
// and what each socket holds now.
type fakeXNU struct {
	fds     map[int]map[int]uint64 // pid → fd → socket handle
	socks   map[uint64]*fdinfo
	kids    map[int][]int
	denied  map[int]bool
	fdReads int
}

func newFakeXNU() *fakeXNU {
	return &fakeXNU{fds: map[int]map[int]uint64{}, socks: map[uint64]*fdinfo{}, kids: map[int][]int{}, denied: map[int]bool{}}
}

func (k *fakeXNU) hold(pid, fd int, s *fdinfo) FD {
	if k.fds[pid] == nil {
		k.fds[pid] = map[int]uint64{}
	}
	k.fds[pid][fd] = s.so
	k.socks[s.so] = s
	sk, _ := parseSocketFdinfo(s.encode())
	return FD{PID: pid, FD: fd, Inode: xnuID(sk)}
}

func (k *fakeXNU) socketFdinfo(pid, fd int, buf []byte) (int, error) {
	k.fdReads++
	if k.denied[pid] {
		return 0, errXNUDenied
	}
	so, ok := k.fds[pid][fd]
	if !ok {
		return 0, ErrGone
	}
	return copy(buf, k.socks[so].encode()), nil
}

func (k *fakeXNU) socketFDs(pid int) ([]int, error) {
	if k.fds[pid] == nil {
		return nil, ErrGone
	}
	var out []int
	for fd := range k.fds[pid] {
		out = append(out, fd)
	}
	return out, nil
}

func (k *fakeXNU) children(pid int) ([]int, error) { return k.kids[pid], nil }

// unixPair connects a sender and a receiver the XNU way: the receiver
// holds what is in flight, the sender's hiwat shrinks by as much.
func (k *fakeXNU) unixPair(sndPID, sndFD, rcvPID, rcvFD int, so uint64, sndbuf, inFlight uint32) (snd, rcv *fdinfo) {
	snd = &fdinfo{so: so, connSo: so + 1, family: xnuAFUnix, typ: 1, kind: xnuKindUn, sndHiwat: sndbuf - inFlight, rcvHiwat: 8192}
	rcv = &fdinfo{so: so + 1, connSo: so, family: xnuAFUnix, typ: 1, kind: xnuKindUn, rcvCC: inFlight, rcvHiwat: 8192, sndHiwat: 8192}
	k.hold(sndPID, sndFD, snd)
	k.hold(rcvPID, rcvFD, rcv)
	return snd, rcv
}

// TestXNUDescribe: a server and a client with a unix and a TCP
// connection, found and linked as on Linux; the client's child's socket
// is in the client's tree.
func TestXNUDescribe(t *testing.T) {
	k := newFakeXNU()
	k.unixPair(100, 5, 200, 7, 0x1000, 8192, 0)
	lo := netip.MustParseAddr("127.0.0.1")
	a, b := netip.AddrPortFrom(lo, 10809), netip.AddrPortFrom(lo, 50000)
	k.hold(100, 6, &fdinfo{so: 0x2000, family: xnuAFInet, typ: 1, kind: xnuKindTCP, local: a, remote: b})
	k.hold(300, 3, &fdinfo{so: 0x2001, family: xnuAFInet, typ: 1, kind: xnuKindTCP, local: b, remote: a})
	k.hold(100, 8, &fdinfo{so: 0x3000, family: 32, typ: 3, kind: 6}) // a kernel control: left out
	k.kids[200] = []int{300}
	srv, err := xnuProcessSockets(k, 100)
	if err != nil || len(srv) != 2 {
		t.Fatalf("server's sockets %v, %v", srv, err)
	}
	cli, err := xnuTreeSockets(k, 200)
	if err != nil || len(cli) != 2 {
		t.Fatalf("client tree's sockets %v, %v", cli, err)
	}
	reg := &peerRegistry{}
	links := Links(xnuDescribe(k, reg, srv), xnuDescribe(k, reg, cli))
	if len(links) != 2 || links[0].A.Kind != KindUnix || links[1].A.Kind != KindTCP ||
		links[0].B.Holders[0] != (FD{PID: 200, FD: 7, Inode: xnuInode(0x1001)}) || links[1].B.Holders[0].PID != 300 {
		t.Fatalf("links %v", links)
	}
	if fd, ok := reg.get(xnuInode(0x1001)); !ok || fd.PID != 200 || fd.FD != 7 {
		t.Errorf("the receiver is not remembered for the sampler: %+v %v", fd, ok)
	}
	if _, err := xnuProcessSockets(k, 999); !errors.Is(err, ErrGone) {
		t.Errorf("a process that is gone: %v", err)
	}
}

// TestXNUSamplerFill: the fill of a unix sender is its receiver's queue
// against the sender's hiwat plus that queue (XNU lowers the one by the
// other); of a TCP sender, its own send buffer. No listing is ever asked.
func TestXNUSamplerFill(t *testing.T) {
	k := newFakeXNU()
	reg := &peerRegistry{}
	snd, rcv := k.unixPair(100, 5, 200, 7, 0x1000, 8192, 8192) // the macOS default, full
	lo := netip.MustParseAddr("127.0.0.1")
	tcp := k.hold(100, 6, &fdinfo{so: 0x2000, family: xnuAFInet, typ: 1, kind: xnuKindTCP, sndCC: 1000, sndHiwat: 65536,
		local: netip.AddrPortFrom(lo, 1), remote: netip.AddrPortFrom(lo, 2)})
	xnuDescribe(k, reg, []FD{{PID: 200, FD: 7, Inode: xnuInode(0x1001)}})
	s, err := newSampler(SamplerConfig{}, newXNUProber(k, reg))
	if err != nil {
		t.Fatal(err)
	}
	s.SetHeld("A", []FD{{PID: 100, FD: 5, Inode: xnuInode(0x1000)}})
	s.SetHeld("B", []FD{tcp})
	ticks(s, 4)
	if a := s.Take("A"); a.Samples != 4 || a.FullPct != 100 || a.MeanBytes != 8192 || a.Limit != 8192 || a.Errors != 0 {
		t.Errorf("a full 8 KiB buffer: %+v", a)
	}
	if b := s.Take("B"); b.Samples != 4 || b.EmptyPct != 100 || b.MeanBytes != 1000 || b.Limit != 65536 {
		t.Errorf("TCP: %+v", b)
	}
	snd.sndHiwat, rcv.rcvCC = 8192, 0 // the receiver read it all
	ticks(s, 2)
	if a := s.Take("A"); a.Samples != 2 || a.EmptyPct != 100 || a.Limit != 8192 {
		t.Errorf("after the receiver read: %+v", a)
	}
	s.Take("B")
	delete(k.fds[100], 5) // the sender closed it
	ticks(s, 1)
	if a := s.Take("A"); a.Samples != 0 || len(a.Gone) != 1 || a.Errors != 0 {
		t.Errorf("closed: %+v", a)
	}
	s.Take("B")
	k.denied[100] = true
	ticks(s, 1)
	if b := s.Take("B"); b.Samples != 0 || len(b.Gone) != 1 || !errors.Is(b.Refused, errXNUDenied) {
		t.Errorf("another user's: %+v", b)
	}
}
