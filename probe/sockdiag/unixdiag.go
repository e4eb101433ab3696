package sockdiag

import (
	"fmt"
)

// Inode is a socket's inode number, as /proc/PID/fd shows it (socket:[N])
// and sock_diag reports it. The kernel hands them out from a 32-bit
// counter (get_next_ino).
type Inode uint32

// unix_diag numbers, from linux/unix_diag.h.
const (
	udiagShowName    = 0x01
	udiagShowVFS     = 0x02
	udiagShowPeer    = 0x04
	udiagShowIcons   = 0x08
	udiagShowRQLen   = 0x10
	udiagShowMemInfo = 0x20

	unixDiagName     = 0
	unixDiagVFS      = 1
	unixDiagPeer     = 2
	unixDiagIcons    = 3
	unixDiagRQLen    = 4
	unixDiagMemInfo  = 5
	unixDiagShutdown = 6
	unixDiagUID      = 7

	unixDiagReqLen = 24 // struct unix_diag_req
	unixDiagMsgLen = 16 // struct unix_diag_msg
)

// unixShowAll is what Conn's unix queries ask for.
const unixShowAll = udiagShowName | udiagShowVFS | udiagShowPeer | udiagShowRQLen | udiagShowMemInfo

// unixShowResolve is what the sampler asks for when it meets a socket:
// its peer (the receiver) too, but no name, which it does not need.
const unixShowResolve = udiagShowPeer | udiagShowRQLen | udiagShowMemInfo

// unixShowSample is what it asks for on every tick: the queues and the
// memory. A connected socket's peer does not change, and looking it up
// (unix_peer_get takes two locks) for every socket of the namespace would
// be most of a dump's cost per socket.
const unixShowSample = udiagShowRQLen | udiagShowMemInfo

// Socket states as sock_diag reports them (include/net/tcp_states.h; unix
// sockets use the same numbers).
const (
	StateEstablished = 1
	StateClose       = 7
	StateListen      = 10
)

// Unix socket types (SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET).
const (
	TypeStream    = 1
	TypeDgram     = 2
	TypeSeqpacket = 5
)

// allStates asks for sockets in every state.
const allStates = ^uint32(0)

// MemInfo is the SK_MEMINFO array (linux/sock_diag.h), what `ss -m` prints
// as skmem:(r,rb,t,tb,f,w,o,bl,d). Every figure is bytes except Drops.
type MemInfo struct {
	Valid      bool   // the reply carried the array
	Fields     int    // how many entries the kernel sent (8 before SK_MEMINFO_DROPS, 9 after)
	RmemAlloc  uint32 // r: memory of the receive queue charged to this socket
	Rcvbuf     uint32 // rb: its limit
	WmemAlloc  uint32 // t: memory of sent skbs not yet freed; for unix, not yet read by the peer
	Sndbuf     uint32 // tb: its limit, SO_SNDBUF as the kernel holds it
	FwdAlloc   uint32 // f: memory reserved ahead (TCP)
	WmemQueued uint32 // w: memory of TCP's write and retransmit queues
	Optmem     uint32 // o: option memory
	Backlog    uint32 // bl: backlog queue length
	Drops      uint32 // d: packets dropped (when Fields > 8)
}

func parseMemInfo(val []byte) (MemInfo, error) {
	n := len(val) / 4
	if n < 4 {
		return MemInfo{}, fmt.Errorf("%w: SK_MEMINFO of %d bytes, want at least 16", ErrMalformed, len(val))
	}
	var m [skMemInfoVars]uint32
	for i := range min(n, skMemInfoVars) {
		m[i] = ne.Uint32(val[4*i : 4*i+4])
	}
	return memInfoOf(&m, n), nil
}

// skMemInfoVars is how many SK_MEMINFO entries MemInfo holds
// (SK_MEMINFO_VARS since Linux 4.6, with SK_MEMINFO_DROPS).
const skMemInfoVars = 9

// memInfoOf names the entries of an SK_MEMINFO array of which the kernel
// sent n (those past n are 0), as netlink's reply and getsockopt(SO_MEMINFO)
// both give it.
func memInfoOf(m *[skMemInfoVars]uint32, n int) MemInfo {
	return MemInfo{
		Valid: true, Fields: n,
		RmemAlloc: m[0], Rcvbuf: m[1], WmemAlloc: m[2], Sndbuf: m[3],
		FwdAlloc: m[4], WmemQueued: m[5], Optmem: m[6], Backlog: m[7], Drops: m[8],
	}
}

// UnixSocket is one AF_UNIX socket as unix_diag describes it.
type UnixSocket struct {
	Inode  Inode
	Cookie Cookie
	Type   uint8 // TypeStream, TypeDgram, TypeSeqpacket
	State  uint8 // StateEstablished, StateListen, …
	// Name is the address the socket is bound to: a path, "@name" for an
	// abstract one, "" for none (an accepted or socketpair socket).
	Name string
	// VFS is the file a path-bound socket is bound to, as the kernel
	// holds it whatever the file has been renamed to since (nil: none
	// reported, an abstract or unbound socket).
	VFS *VFSFile
	// Peer is the inode of the socket it is connected to, 0 for none.
	Peer Inode
	// HasQueues says RQueue and WQueue were reported (UDIAG_SHOW_RQLEN).
	HasQueues bool
	// RQueue is the payload bytes waiting in this socket's receive queue
	// (unix_inq_len; for a listener, the connections waiting for accept).
	RQueue uint32
	// WQueue is this socket's send memory in flight (unix_outq_len, the
	// same figure as MemInfo.WmemAlloc and SIOCOUTQ; for a listener, its
	// backlog limit).
	WQueue   uint32
	Mem      MemInfo
	Shutdown uint8 // SHUT_RD=1 / SHUT_WR=2 bits as the kernel holds them
}

// appendUnixRequest writes a unix_diag request. ino == 0 asks for a dump of
// every unix socket in the network namespace; otherwise for the one socket,
// which must also match cookie (NoCookie matches any).
func appendUnixRequest(b []byte, seq uint32, ino Inode, cookie Cookie, show uint32) []byte {
	flags := uint16(nlmFRequest)
	if ino == 0 {
		flags |= nlmFDump
	}
	b = appendHeader(b, unixDiagReqLen, flags, seq)
	b = append(b, afUnix, 0, 0, 0) // family, protocol, pad
	b = ne.AppendUint32(b, allStates)
	b = ne.AppendUint32(b, uint32(ino))
	b = ne.AppendUint32(b, show)
	b = ne.AppendUint32(b, cookie[0])
	return ne.AppendUint32(b, cookie[1])
}

// ParseUnixDiag parses one datagram of a unix_diag reply to the request
// numbered seq, and appends its sockets to dst. Messages of another
// sequence number (left over from an abandoned request) are skipped.
// done is true once the reply is complete: NLMSG_DONE ended a dump, a
// single (non-multipart) answer came, or the kernel sent an error, which is
// then err (a *KernelError; errors.Is(err, ErrGone) for a socket that does
// not exist). A reply that cannot be parsed is an error wrapping
// ErrMalformed. Attributes it does not know are skipped.
func ParseUnixDiag(b []byte, seq uint32, dst []UnixSocket) (out []UnixSocket, done bool, err error) {
	return parseDiag(b, seq, dst, "a unix_diag", parseUnixMsg)
}

// parseUnixMsg parses a struct unix_diag_msg and its attributes.
func parseUnixMsg(p []byte) (UnixSocket, error) {
	if len(p) < unixDiagMsgLen {
		return UnixSocket{}, fmt.Errorf("%w: unix_diag_msg of %d bytes, want %d", ErrMalformed, len(p), unixDiagMsgLen)
	}
	if p[0] != afUnix {
		return UnixSocket{}, fmt.Errorf("%w: family %d in a unix_diag reply", ErrMalformed, p[0])
	}
	s := UnixSocket{
		Type:   p[1],
		State:  p[2],
		Inode:  Inode(ne.Uint32(p[4:8])),
		Cookie: Cookie{ne.Uint32(p[8:12]), ne.Uint32(p[12:16])},
	}
	err := walkAttrs(p[unixDiagMsgLen:], func(typ uint16, val []byte) error {
		return s.setAttr(typ, val)
	})
	if err != nil {
		return UnixSocket{}, fmt.Errorf("unix socket %d: %w", s.Inode, err)
	}
	return s, nil
}

func (s *UnixSocket) setAttr(typ uint16, val []byte) error {
	var err error
	switch typ {
	case unixDiagName:
		s.Name = unixName(val)
	case unixDiagVFS:
		if len(val) < 8 {
			return fmt.Errorf("%w: UNIX_DIAG_VFS of %d bytes, want 8", ErrMalformed, len(val))
		}
		s.VFS = &VFSFile{Ino: ne.Uint32(val[0:4]), Dev: ne.Uint32(val[4:8])}
	case unixDiagPeer:
		var v uint32
		v, err = attrU32("UNIX_DIAG_PEER", val)
		s.Peer = Inode(v)
	case unixDiagRQLen:
		if len(val) < 8 {
			return fmt.Errorf("%w: UNIX_DIAG_RQLEN of %d bytes, want 8", ErrMalformed, len(val))
		}
		s.HasQueues, s.RQueue, s.WQueue = true, ne.Uint32(val[0:4]), ne.Uint32(val[4:8])
	case unixDiagMemInfo:
		s.Mem, err = parseMemInfo(val)
	case unixDiagShutdown:
		if len(val) < 1 {
			return fmt.Errorf("%w: empty UNIX_DIAG_SHUTDOWN", ErrMalformed)
		}
		s.Shutdown = val[0]
	}
	// UNIX_DIAG_ICONS, _UID and types newer than this code: not asked
	// for or not needed, skipped.
	return err
}

// VFSFile is struct unix_diag_vfs: the inode of the file a socket is
// bound to and the kernel's number of its filesystem (sb->s_dev: major in
// the top 12 bits, minor in the low 20, not stat's st_dev encoding).
type VFSFile struct {
	Ino uint32 // the file's inode number, truncated to 32 bits
	Dev uint32
}

// Is tells whether the file is the one stat gave ino and dev for (st_ino,
// st_dev, as unix.Stat_t has them): the same inode on the same device.
func (f VFSFile) Is(ino, dev uint64) bool {
	return f.Ino == uint32(ino) && f.Dev>>20 == devMajor(dev) && f.Dev&(1<<20-1) == devMinor(dev)
}

// devMajor and devMinor split a dev_t as glibc's gnu_dev_major and
// gnu_dev_minor do (the encoding stat returns).
func devMajor(dev uint64) uint32 { return uint32((dev>>8)&0xfff | (dev>>32)&^0xfff) }
func devMinor(dev uint64) uint32 { return uint32(dev&0xff | (dev>>12)&^0xff) }

// unixName renders a sun_path as ss does: an abstract name (leading NUL)
// as "@name", a path up to its terminating NUL.
func unixName(val []byte) string {
	if len(val) == 0 {
		return ""
	}
	if val[0] == 0 {
		return "@" + string(val[1:])
	}
	for i, c := range val {
		if c == 0 {
			return string(val[:i])
		}
	}
	return string(val)
}
