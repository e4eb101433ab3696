package sockdiag

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// inet_diag numbers, from linux/inet_diag.h.
const (
	inetDiagInfo      = 2 // INET_DIAG_INFO: struct tcp_info
	inetDiagShutdown  = 8
	inetDiagSkMemInfo = 7 // INET_DIAG_SKMEMINFO: the SK_MEMINFO array

	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	inetDiagSockIDLn = 48 // struct inet_diag_sockid
	inetDiagMsgLen   = 72 // struct inet_diag_msg
)

// inetExt asks for tcp_info and the SK_MEMINFO array: idiag_ext has bit
// (N-1) for extension N.
const inetExt = 1<<(inetDiagInfo-1) | 1<<(inetDiagSkMemInfo-1)

// inetExtSample asks for SK_MEMINFO only: the sampler needs no tcp_info,
// which the kernel fills under the socket's lock.
const inetExtSample = 1 << (inetDiagSkMemInfo - 1)

// TCP states, from include/net/tcp_states.h; StateEstablished, StateClose
// and StateListen above are shared with unix sockets.
const (
	StateSynSent   = 2
	StateSynRecv   = 3
	StateFinWait1  = 4
	StateFinWait2  = 5
	StateTimeWait  = 6
	StateCloseWait = 8
	StateLastAck   = 9
	StateClosing   = 11
)

// TCPInfo is the part of struct tcp_info (linux/tcp.h) nbdscope uses. A
// field the running kernel's tcp_info is too short to hold stays 0 and its
// Has flag false.
type TCPInfo struct {
	Valid        bool
	State        uint8
	Unacked      uint32 // segments sent and not yet acknowledged
	SndMSS       uint32
	SndCwnd      uint32 // congestion window, in segments
	RTTMicros    uint32 // smoothed round-trip time
	BytesAcked   uint64 // (Linux 4.1+)
	BytesRecv    uint64 // bytes_received (Linux 4.1+)
	HasNotSent   bool
	NotSentBytes uint32 // bytes written and not yet sent (Linux 4.6+)
	HasSndbufLim bool
	// SndbufLimitedMicros is the time the connection was limited by its
	// send buffer (Linux 4.10+): the sender had nothing it was allowed to
	// queue.
	SndbufLimitedMicros uint64
	HasBytesSent        bool
	BytesSent           uint64 // bytes sent, retransmissions included (Linux 4.19+)
}

// Offsets in struct tcp_info; the layout only ever grows at the end.
const (
	tcpiState         = 0
	tcpiSndMSS        = 16
	tcpiUnacked       = 24
	tcpiRTT           = 68
	tcpiSndCwnd       = 80
	tcpiBytesAcked    = 120
	tcpiBytesReceived = 128
	tcpiNotSent       = 144
	tcpiSndbufLimited = 184
	tcpiBytesSent     = 200
)

func parseTCPInfo(v []byte) TCPInfo {
	u32 := func(off int) (uint32, bool) {
		if off+4 > len(v) {
			return 0, false
		}
		return ne.Uint32(v[off : off+4]), true
	}
	u64 := func(off int) (uint64, bool) {
		if off+8 > len(v) {
			return 0, false
		}
		return ne.Uint64(v[off : off+8]), true
	}
	var t TCPInfo
	if len(v) == 0 {
		return t
	}
	t.Valid, t.State = true, v[tcpiState]
	t.SndMSS, _ = u32(tcpiSndMSS)
	t.Unacked, _ = u32(tcpiUnacked)
	t.RTTMicros, _ = u32(tcpiRTT)
	t.SndCwnd, _ = u32(tcpiSndCwnd)
	t.BytesAcked, _ = u64(tcpiBytesAcked)
	t.BytesRecv, _ = u64(tcpiBytesReceived)
	t.NotSentBytes, t.HasNotSent = u32(tcpiNotSent)
	t.SndbufLimitedMicros, t.HasSndbufLim = u64(tcpiSndbufLimited)
	t.BytesSent, t.HasBytesSent = u64(tcpiBytesSent)
	return t
}

// TCPSocket is one TCP socket as inet_diag describes it.
type TCPSocket struct {
	Inode  Inode // 0 for a socket no file holds any more (TIME_WAIT, orphans)
	Cookie Cookie
	Family uint8 // 2 (AF_INET) or 10 (AF_INET6)
	State  uint8
	Local  netip.AddrPort
	Remote netip.AddrPort
	Iface  uint32 // bound interface index, 0 for none
	UID    uint32
	// RQueue is the payload bytes received and not yet read by the
	// application (rcv_nxt - copied_seq); for a listener, its accept queue.
	RQueue uint32
	// WQueue is the payload bytes written and not yet acknowledged by the
	// peer, the not-yet-sent included (write_seq - snd_una: what SIOCOUTQ
	// returns on a held TCP socket); for a listener, its backlog limit.
	WQueue   uint32
	Mem      MemInfo // INET_DIAG_SKMEMINFO
	Info     TCPInfo // INET_DIAG_INFO
	Shutdown uint8
}

// tcpKey is what inet_diag's exact lookup needs: the 4-tuple, family and
// interface.
type tcpKey struct {
	family        uint8
	local, remote netip.AddrPort
	iface         uint32
}

func (s *TCPSocket) key() tcpKey {
	return tcpKey{family: s.Family, local: s.Local, remote: s.Remote, iface: s.Iface}
}

// appendInetRequest writes an inet_diag request for TCP over family, for
// the extensions ext. A nil key asks for a dump of the sockets in states (a
// bit per state); a key asks for that one connection, which must also
// match cookie.
func appendInetRequest(b []byte, seq uint32, family uint8, ext uint8, states uint32, k *tcpKey, cookie Cookie) []byte {
	flags := uint16(nlmFRequest)
	if k == nil {
		flags |= nlmFDump
	}
	b = appendHeader(b, inetDiagReqLen, flags, seq)
	b = append(b, family, ipprotoTCP, ext, 0)
	b = ne.AppendUint32(b, states)
	var id [inetDiagSockIDLn]byte
	if k != nil {
		putSockID(id[:], k, cookie)
	} else {
		ne.PutUint32(id[40:44], cookie[0])
		ne.PutUint32(id[44:48], cookie[1])
	}
	return append(b, id[:]...)
}

// putSockID fills a struct inet_diag_sockid: sport, dport (big endian),
// src[4], dst[4] (network order, an IPv4 address in the first word), if,
// cookie.
func putSockID(id []byte, k *tcpKey, cookie Cookie) {
	binary.BigEndian.PutUint16(id[0:2], k.local.Port())
	binary.BigEndian.PutUint16(id[2:4], k.remote.Port())
	putAddr(id[4:20], k.family, k.local.Addr())
	putAddr(id[20:36], k.family, k.remote.Addr())
	ne.PutUint32(id[36:40], k.iface)
	ne.PutUint32(id[40:44], cookie[0])
	ne.PutUint32(id[44:48], cookie[1])
}

// putAddr writes a into dst as family wants it; an address that does not
// fit the family (or none at all, a listener's remote end) stays zero.
func putAddr(dst []byte, family uint8, a netip.Addr) {
	switch {
	case !a.IsValid():
	case family == afInet && a.Unmap().Is4():
		a4 := a.Unmap().As4()
		copy(dst, a4[:])
	case family == afInet6:
		a16 := a.As16()
		copy(dst, a16[:])
	}
}

func getAddr(src []byte, family uint8) netip.Addr {
	if family == afInet {
		return netip.AddrFrom4([4]byte(src[0:4]))
	}
	return netip.AddrFrom16([16]byte(src[0:16]))
}

// ParseInetDiag parses one datagram of an inet_diag (TCP) reply to the
// request numbered seq, and appends its sockets to dst. It follows the
// rules of ParseUnixDiag: other sequence numbers skipped, done at
// NLMSG_DONE, a single answer or an error, ErrMalformed for what cannot be
// parsed, unknown attributes skipped.
func ParseInetDiag(b []byte, seq uint32, dst []TCPSocket) (out []TCPSocket, done bool, err error) {
	return parseDiag(b, seq, dst, "an inet_diag", parseInetMsg)
}

// parseInetMsg parses a struct inet_diag_msg and its attributes.
func parseInetMsg(p []byte) (TCPSocket, error) {
	if len(p) < inetDiagMsgLen {
		return TCPSocket{}, fmt.Errorf("%w: inet_diag_msg of %d bytes, want %d", ErrMalformed, len(p), inetDiagMsgLen)
	}
	fam := p[0]
	if fam != afInet && fam != afInet6 {
		return TCPSocket{}, fmt.Errorf("%w: family %d in an inet_diag reply", ErrMalformed, fam)
	}
	id := p[4 : 4+inetDiagSockIDLn]
	s := TCPSocket{
		Family: fam,
		State:  p[1],
		Local:  netip.AddrPortFrom(getAddr(id[4:20], fam), binary.BigEndian.Uint16(id[0:2])),
		Remote: netip.AddrPortFrom(getAddr(id[20:36], fam), binary.BigEndian.Uint16(id[2:4])),
		Iface:  ne.Uint32(id[36:40]),
		Cookie: Cookie{ne.Uint32(id[40:44]), ne.Uint32(id[44:48])},
		RQueue: ne.Uint32(p[56:60]),
		WQueue: ne.Uint32(p[60:64]),
		UID:    ne.Uint32(p[64:68]),
		Inode:  Inode(ne.Uint32(p[68:72])),
	}
	err := walkAttrs(p[inetDiagMsgLen:], func(typ uint16, val []byte) error {
		var aerr error
		switch typ {
		case inetDiagSkMemInfo:
			s.Mem, aerr = parseMemInfo(val)
		case inetDiagInfo:
			s.Info = parseTCPInfo(val)
		case inetDiagShutdown:
			if len(val) >= 1 {
				s.Shutdown = val[0]
			}
		}
		return aerr
	})
	if err != nil {
		return TCPSocket{}, fmt.Errorf("tcp socket %d (%v → %v): %w", s.Inode, s.Local, s.Remote, err)
	}
	return s, nil
}
