package sockdiag

import (
	"net/netip"
)

// Builders of netlink replies as the kernel writes them, for the parser
// tests and the fuzz seeds that cannot come from a live kernel (errors,
// truncations, odd attributes).

func nlMsg(typ, flags uint16, seq uint32, payload []byte) []byte {
	b := appendHeaderType(nil, len(payload), typ, flags, seq)
	b = append(b, payload...)
	for len(b)%nlmsgAlignTo != 0 {
		b = append(b, 0)
	}
	return b
}

func appendHeaderType(b []byte, payloadLen int, typ, flags uint16, seq uint32) []byte {
	b = ne.AppendUint32(b, uint32(nlmsgHdrLen+payloadLen))
	b = ne.AppendUint16(b, typ)
	b = ne.AppendUint16(b, flags)
	b = ne.AppendUint32(b, seq)
	return ne.AppendUint32(b, 0)
}

func nlAttr(typ uint16, val []byte) []byte {
	b := ne.AppendUint16(nil, uint16(nlaHdrLen+len(val)))
	b = ne.AppendUint16(b, typ)
	b = append(b, val...)
	for len(b)%nlaAlignTo != 0 {
		b = append(b, 0)
	}
	return b
}

func u32s(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = ne.AppendUint32(b, v)
	}
	return b
}

func nlDone(seq uint32) []byte { return nlMsg(nlmsgDone, nlmFMulti, seq, u32s(0)) }

func nlErr(seq uint32, errno int32) []byte {
	p := ne.AppendUint32(nil, uint32(errno))
	p = append(p, make([]byte, nlmsgHdrLen)...) // the request's header, echoed
	return nlMsg(nlmsgError, 0, seq, p)
}

type fakeUnix struct {
	ino, peer       uint32
	cookie          Cookie
	typ, state      uint8
	name            string
	rq, wq          uint32
	mem             []uint32 // nil: no SK_MEMINFO
	extra           []byte   // appended attributes
	noRQLen         bool
	family          uint8 // 0 means AF_UNIX
	truncatePayload int   // cut the payload to this many bytes when > 0
}

func (u fakeUnix) payload() []byte {
	fam := u.family
	if fam == 0 {
		fam = afUnix
	}
	p := []byte{fam, u.typ, u.state, 0}
	p = append(p, u32s(u.ino, u.cookie[0], u.cookie[1])...)
	if u.name != "" {
		p = append(p, nlAttr(unixDiagName, []byte(u.name))...)
	}
	if u.peer != 0 {
		p = append(p, nlAttr(unixDiagPeer, u32s(u.peer))...)
	}
	if !u.noRQLen {
		p = append(p, nlAttr(unixDiagRQLen, u32s(u.rq, u.wq))...)
	}
	if u.mem != nil {
		p = append(p, nlAttr(unixDiagMemInfo, u32s(u.mem...))...)
	}
	p = append(p, nlAttr(unixDiagShutdown, []byte{0})...)
	p = append(p, u.extra...)
	if u.truncatePayload > 0 && u.truncatePayload < len(p) {
		p = p[:u.truncatePayload]
	}
	return p
}

type fakeTCP struct {
	family        uint8
	state         uint8
	local, remote netip.AddrPort
	cookie        Cookie
	rq, wq        uint32
	uid, ino      uint32
	mem           []uint32
	info          []byte
}

func (t fakeTCP) payload() []byte {
	p := []byte{t.family, t.state, 0, 0}
	var id [inetDiagSockIDLn]byte
	k := tcpKey{family: t.family, local: t.local, remote: t.remote}
	putSockID(id[:], &k, t.cookie)
	p = append(p, id[:]...)
	p = append(p, u32s(0, t.rq, t.wq, t.uid, t.ino)...)
	if t.mem != nil {
		p = append(p, nlAttr(inetDiagSkMemInfo, u32s(t.mem...))...)
	}
	if t.info != nil {
		p = append(p, nlAttr(inetDiagInfo, t.info)...)
	}
	return p
}

// tcpInfoBytes is a struct tcp_info of n bytes with a few fields set.
func tcpInfoBytes(n int, state uint8, notsent uint32, bytesSent uint64) []byte {
	b := make([]byte, n)
	b[0] = state
	if tcpiNotSent+4 <= n {
		ne.PutUint32(b[tcpiNotSent:], notsent)
	}
	if tcpiBytesSent+8 <= n {
		ne.PutUint64(b[tcpiBytesSent:], bytesSent)
	}
	return b
}
