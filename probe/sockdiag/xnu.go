package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"sync"
)

// The macOS reader, built to XNU's rules (bsd/sys/proc_info.h,
// bsd/kern/proc_info.c, bsd/kern/uipc_usrreq.c) and tested on Linux
// through a double of the kernel (xnuSource). macOS has no sock_diag: it
// describes one descriptor of one process at a time, with
// proc_pidfdinfo(PROC_PIDFDSOCKETINFO), which fills a struct
// socket_fdinfo. So a socket's identity is the opaque handle XNU gives it
// (soi_so, a permuted kernel address) and a unix socket's peer is the
// handle of the socket it is connected to (unsi_conn_so).
//
// What a unix stream socket's fill is on XNU: uipc_send appends what the
// sender writes straight to the receiver's so_rcv and lowers the sender's
// so_snd.sb_hiwat by the bytes now queued there, raising it again as the
// receiver reads (uipc_rcvd). The sender's own sb_cc stays 0. So the bytes
// in flight are the receiver's soi_rcv.sbi_cc, and the limit they are held
// against is the sender's soi_snd.sbi_hiwat plus those bytes: what
// getsockopt(SO_SNDBUF) reports. TCP keeps its unsent and unacknowledged
// bytes in the sender's so_snd: in flight soi_snd.sbi_cc, limit
// soi_snd.sbi_hiwat.

// The layout of struct socket_fdinfo on 64-bit macOS (x86_64 and arm64,
// both little-endian, natural alignment): a proc_fileinfo (24 bytes), then
// a socket_info: vinfo_stat (136), soi_so and soi_pcb, type, protocol,
// family, eight shorts, oobmark, soi_rcv and soi_snd (sockbuf_info, 24
// bytes each), soi_kind, a reserved word, and the soi_proto union, whose
// largest member is un_sockinfo (two handles and two 255-byte addresses,
// 528 bytes with padding).
const (
	xnuFdinfoSize = 792 // PROC_PIDFDSOCKETINFO_SIZE

	xnuOffSo       = 24 + 136         // soi_so
	xnuOffType     = 24 + 152         // soi_type
	xnuOffFamily   = 24 + 160         // soi_family
	xnuOffOptions  = 24 + 164         // soi_options
	xnuOffState    = 24 + 168         // soi_state
	xnuOffRcv      = 24 + 184         // soi_rcv: sbi_cc, then sbi_hiwat
	xnuOffSnd      = 24 + 208         // soi_snd
	xnuOffKind     = 24 + 232         // soi_kind
	xnuOffProto    = 24 + 240         // soi_proto
	xnuOffConnSo   = xnuOffProto      // pri_un.unsi_conn_so
	xnuOffFport    = xnuOffProto      // pri_in.insi_fport (pri_tcp.tcpsi_ini first)
	xnuOffLport    = xnuOffProto + 4  // insi_lport
	xnuOffVflag    = xnuOffProto + 24 // insi_vflag
	xnuOffFaddr    = xnuOffProto + 32 // insi_faddr: in4in6_addr or in6_addr
	xnuOffLaddr    = xnuOffProto + 48 // insi_laddr
	xnuOffTCPState = xnuOffProto + 80 // pri_tcp.tcpsi_state

	xnuAFUnix  = 1
	xnuAFInet  = 2
	xnuAFInet6 = 30

	xnuKindIn  = 1 // SOCKINFO_IN
	xnuKindTCP = 2 // SOCKINFO_TCP
	xnuKindUn  = 3 // SOCKINFO_UN

	xnuSOAcceptConn  = 0x0002 // soi_options: a listener
	xnuSSIsConnected = 0x0002 // SOI_S_ISCONNECTED
	xnuINIIPv4       = 0x1    // insi_vflag
	xnuTSIListen     = 1      // TSI_S_LISTEN
	xnuTSIEstab      = 4      // TSI_S_ESTABLISHED

	xnuFDTypeSocket = 2 // PROX_FDTYPE_SOCKET
)

// errXNULayout says a reply does not look like the socket_fdinfo this
// reader was built for: the figures are not taken rather than misread.
var errXNULayout = errors.New("the kernel's socket_fdinfo does not have the layout nbdscope was built for (XNU's bsd/sys/proc_info.h)")

// xnuSocket is what the reader takes from one socket_fdinfo.
type xnuSocket struct {
	So, ConnSo                       uint64 // handles: the socket and, for unix, its peer
	Family, Type, Kind               int32
	Listening, Connected             bool
	RcvCC, RcvHiwat, SndCC, SndHiwat uint32
	Local, Remote                    netip.AddrPort // TCP
	TCPState                         int32
}

// parseSocketFdinfo reads a socket_fdinfo, checking what it can of the
// layout: the size, a family nbdscope knows, and the kind XNU gives that
// family. A socket of another family (a kernel control, a route socket)
// is an error too: it is none of the sockets sampled.
func parseSocketFdinfo(b []byte) (xnuSocket, error) {
	if len(b) != xnuFdinfoSize {
		return xnuSocket{}, fmt.Errorf("%w: %d bytes, want %d", errXNULayout, len(b), xnuFdinfoSize)
	}
	le := binary.LittleEndian
	s := xnuSocket{
		So: le.Uint64(b[xnuOffSo:]), Family: int32(le.Uint32(b[xnuOffFamily:])),
		Type: int32(le.Uint32(b[xnuOffType:])), Kind: int32(le.Uint32(b[xnuOffKind:])),
		Listening: le.Uint16(b[xnuOffOptions:])&xnuSOAcceptConn != 0,
		Connected: le.Uint16(b[xnuOffState:])&xnuSSIsConnected != 0,
		RcvCC:     le.Uint32(b[xnuOffRcv:]), RcvHiwat: le.Uint32(b[xnuOffRcv+4:]),
		SndCC: le.Uint32(b[xnuOffSnd:]), SndHiwat: le.Uint32(b[xnuOffSnd+4:]),
	}
	if s.So == 0 || s.Type < 1 || s.Type > 5 {
		return xnuSocket{}, fmt.Errorf("%w: handle %#x, type %d", errXNULayout, s.So, s.Type)
	}
	switch s.Family {
	case xnuAFUnix:
		if s.Kind != xnuKindUn {
			return xnuSocket{}, fmt.Errorf("%w: a unix socket of kind %d, want %d", errXNULayout, s.Kind, xnuKindUn)
		}
		s.ConnSo = le.Uint64(b[xnuOffConnSo:])
	case xnuAFInet, xnuAFInet6:
		if s.Kind != xnuKindIn && s.Kind != xnuKindTCP {
			return xnuSocket{}, fmt.Errorf("%w: an inet socket of kind %d", errXNULayout, s.Kind)
		}
		s.Local, s.Remote = xnuAddrs(b)
		if s.Kind == xnuKindTCP {
			s.TCPState = int32(le.Uint32(b[xnuOffTCPState:]))
		}
	default:
		return xnuSocket{}, fmt.Errorf("%w: family %d", ErrNotSampled, s.Family)
	}
	return s, nil
}

// ErrNotSampled is a socket of a family the sampler does not read.
var ErrNotSampled = errors.New("not a unix or TCP socket")

// xnuAddrs reads an inet socket's local and remote address and port. The
// ports are stored as ints holding the network-order u_short.
func xnuAddrs(b []byte) (local, remote netip.AddrPort) {
	le := binary.LittleEndian
	port := func(off int) uint16 {
		v := uint16(le.Uint32(b[off:]))
		return v<<8 | v>>8
	}
	addr := func(off int) netip.Addr {
		if b[xnuOffVflag]&xnuINIIPv4 != 0 {
			return netip.AddrFrom4([4]byte(b[off+12 : off+16]))
		}
		return netip.AddrFrom16([16]byte(b[off : off+16]))
	}
	return netip.AddrPortFrom(addr(xnuOffLaddr), port(xnuOffLport)),
		netip.AddrPortFrom(addr(xnuOffFaddr), port(xnuOffFport))
}

// xnuInode folds a 64-bit socket handle into the Inode the rest of the
// package keys sockets by. The handles of live sockets differ in their
// low bits (they are kernel heap addresses plus one constant), so the
// fold keeps them apart; 0 stays reserved for "none".
func xnuInode(handle uint64) Inode {
	if handle == 0 {
		return 0
	}
	if ino := Inode(uint32(handle) ^ uint32(handle>>32)); ino != 0 {
		return ino
	}
	return 1
}

// xnuID is the Inode a socket is known by on XNU: its folded handle for a
// unix socket, a hash of its 4-tuple for TCP, so that a connection's two
// ends can be paired without reading both at once (a unix socket names
// its peer's handle; a TCP socket's peer is the one with the mirrored
// tuple).
func xnuID(s xnuSocket) Inode {
	if s.Family == xnuAFUnix {
		return xnuInode(s.So)
	}
	return xnuTupleID(s.Local, s.Remote)
}

func xnuTupleID(local, remote netip.AddrPort) Inode {
	h := fnv.New32a()
	k := tupleOf(local, remote)
	for _, ap := range []netip.AddrPort{k.local, k.remote} {
		b, _ := ap.MarshalBinary()
		h.Write(b)
	}
	if ino := Inode(h.Sum32()); ino != 0 {
		return ino
	}
	return 1
}

// xnuSource is what the reader needs of the kernel; on macOS it is
// proc_info(2) (xnu_darwin.go), in tests a double.
type xnuSource interface {
	// socketFdinfo fills buf (xnuFdinfoSize bytes) with pid's fd's
	// socket_fdinfo and returns how many bytes the kernel wrote.
	socketFdinfo(pid, fd int, buf []byte) (int, error)
	// socketFDs lists pid's descriptors that are sockets
	// (PROC_PIDLISTFDS, PROX_FDTYPE_SOCKET).
	socketFDs(pid int) ([]int, error)
	// children lists the PIDs whose parent is pid (PROC_PPID_ONLY).
	children(pid int) ([]int, error)
}

// xnuRead reads and parses one descriptor's socket_fdinfo.
func xnuRead(src xnuSource, pid, fd int, buf []byte) (xnuSocket, error) {
	n, err := src.socketFdinfo(pid, fd, buf)
	if err != nil {
		return xnuSocket{}, err
	}
	return parseSocketFdinfo(buf[:n])
}

// xnuProcessSockets lists pid's unix and TCP sockets, in descriptor order.
// A descriptor closed meanwhile, or of another family, is left out.
func xnuProcessSockets(src xnuSource, pid int) ([]FD, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: not a PID", pid)
	}
	fds, err := src.socketFDs(pid)
	if err != nil {
		return nil, fmt.Errorf("process %d: list its descriptors: %w", pid, err)
	}
	buf := make([]byte, xnuFdinfoSize)
	var out []FD
	for _, fd := range fds {
		s, err := xnuRead(src, pid, fd, buf)
		if err == nil {
			out = append(out, FD{PID: pid, FD: fd, Inode: xnuID(s)})
		}
	}
	sortFDs(out)
	return out, nil
}

// xnuTree is pid and its descendants, pid first, at most maxTreeSize.
func xnuTree(src xnuSource, pid int) ([]int, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: not a PID", pid)
	}
	tree := []int{pid}
	for i := 0; i < len(tree) && len(tree) < maxTreeSize; i++ {
		kids, err := src.children(tree[i])
		if err != nil {
			return nil, fmt.Errorf("process %d's children: %w", tree[i], err)
		}
		tree = append(tree, kids...)
	}
	return tree[:min(len(tree), maxTreeSize)], nil
}

// xnuTreeSockets is xnuProcessSockets over pid's tree; a descendant that
// exits meanwhile is left out.
func xnuTreeSockets(src xnuSource, pid int) ([]FD, error) {
	pids, err := xnuTree(src, pid)
	if err != nil {
		return nil, err
	}
	var out []FD
	for i, p := range pids {
		fds, err := xnuProcessSockets(src, p)
		if err != nil && i == 0 {
			return nil, err
		}
		out = append(out, fds...)
	}
	return out, nil
}

// xnuDescribe is Describe on XNU: each descriptor read on its own, joined
// as on Linux (unix peers by handle, TCP peers by mirrored addresses).
// Every unix socket seen is remembered with a holder in reg, so that the
// sampler can read a sender's receiver.
func xnuDescribe(src xnuSource, reg *peerRegistry, fds []FD) []Socket {
	buf := make([]byte, xnuFdinfoSize)
	var unixSocks []UnixSocket
	var tcpSocks []TCPSocket
	seen := map[Inode]bool{}
	for _, f := range fds {
		s, err := xnuRead(src, f.PID, f.FD, buf)
		if err != nil || seen[xnuID(s)] {
			continue
		}
		ino := xnuID(s)
		seen[ino] = true
		if s.Family == xnuAFUnix {
			reg.put(ino, FD{PID: f.PID, FD: f.FD, Inode: ino})
			unixSocks = append(unixSocks, xnuUnixSocket(s))
		} else if s.Kind == xnuKindTCP {
			tcpSocks = append(tcpSocks, xnuTCPSocket(s))
		}
	}
	var known []FD
	for _, f := range fds {
		if seen[f.Inode] {
			known = append(known, f)
		}
	}
	out := describe(known, unixSocks, tcpSocks)
	for i := range out {
		if k := &out[i]; k.Kind == KindTCP && k.TCP.Remote.Port() != 0 {
			k.Peer = xnuTupleID(k.TCP.Remote, k.TCP.Local)
		}
	}
	return out
}

func xnuUnixSocket(s xnuSocket) UnixSocket {
	u := UnixSocket{Inode: xnuInode(s.So), Type: uint8(s.Type), Peer: xnuInode(s.ConnSo), HasQueues: true,
		RQueue: s.RcvCC, Mem: MemInfo{Valid: true, Fields: 4, Rcvbuf: s.RcvHiwat, Sndbuf: s.SndHiwat}}
	switch {
	case s.Listening:
		u.State = StateListen
	case s.Connected:
		u.State = StateEstablished
	}
	return u
}

func xnuTCPSocket(s xnuSocket) TCPSocket {
	t := TCPSocket{Inode: xnuID(s), Family: afInet, Local: s.Local, Remote: s.Remote, RQueue: s.RcvCC,
		WQueue: s.SndCC, Mem: MemInfo{Valid: true, Fields: 6, Rcvbuf: s.RcvHiwat, Sndbuf: s.SndHiwat, WmemQueued: s.SndCC}}
	if s.Family == xnuAFInet6 {
		t.Family = afInet6
	}
	switch s.TCPState {
	case xnuTSIListen:
		t.State = StateListen
	case xnuTSIEstab:
		t.State = StateEstablished
	}
	return t
}

// peerRegistry remembers, for each unix socket Describe saw, a descriptor
// that holds it: XNU tells a sender's peer by handle only, and the bytes
// in flight are the peer's. It is shared by the Describe that finds the
// connections and the sampler that reads them, and emptied when it grows
// past maxPeers (the next Describe fills it again).
type peerRegistry struct {
	mu sync.Mutex
	by map[Inode]FD
}

const maxPeers = 1 << 12

func (r *peerRegistry) put(ino Inode, fd FD) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil || len(r.by) >= maxPeers {
		r.by = map[Inode]FD{}
	}
	r.by[ino] = fd
}

func (r *peerRegistry) get(ino Inode) (FD, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fd, ok := r.by[ino]
	return fd, ok
}

// xnuProber is the sampler's prober on XNU. There are no listings: every
// socket is read through its holder, and one without a holder that can
// be read is gone.
type xnuProber struct {
	src xnuSource
	reg *peerRegistry
	buf []byte
}

func newXNUProber(src xnuSource, reg *peerRegistry) *xnuProber {
	return &xnuProber{src: src, reg: reg, buf: make([]byte, xnuFdinfoSize)}
}

func (p *xnuProber) unixDump(dst []UnixSocket, _ uint32) ([]UnixSocket, error) { return dst, nil }

func (p *xnuProber) tcpDump(dst []TCPSocket, _, _ uint8, _ uint32) ([]TCPSocket, error) {
	return dst, nil
}

func (p *xnuProber) exactBatch(reqs []exactReq, res []exactRes) error {
	for i := range reqs {
		res[i] = exactRes{err: ErrGone}
	}
	return nil
}

func (p *xnuProber) forgetHolders(map[int]bool) {}

func (p *xnuProber) Close() error { return nil }

// heldMem reads h's socket and, for a unix sender, its receiver, and
// gives the fill as XNU keeps it (see the top of this file) in the terms
// of SK_MEMINFO: the bytes in flight as WmemAlloc (unix) or WmemQueued
// (TCP), the limit as Sndbuf.
func (p *xnuProber) heldMem(h FD) (MemInfo, Kind, error) {
	s, err := p.read(h)
	if err != nil {
		return MemInfo{}, 0, err
	}
	if s.Family != xnuAFUnix {
		return MemInfo{Valid: true, Fields: 6, WmemQueued: s.SndCC, Sndbuf: s.SndHiwat}, KindTCP, nil
	}
	peer, ok := p.reg.get(xnuInode(s.ConnSo))
	if !ok {
		return MemInfo{}, 0, errHeldMoved // not connected, or its receiver not seen by Describe
	}
	r, err := p.read(peer)
	if err != nil {
		return MemInfo{}, 0, err
	}
	return MemInfo{Valid: true, Fields: 4, WmemAlloc: r.RcvCC, Sndbuf: s.SndHiwat + r.RcvCC}, KindUnix, nil
}

// read reads h, checking it still names its socket. A process that does
// not let its descriptors be read (another user's) refuses; a layout
// this reader does not know refuses too, for every process alike.
func (p *xnuProber) read(h FD) (xnuSocket, error) {
	s, err := xnuRead(p.src, h.PID, h.FD, p.buf)
	switch {
	case errors.Is(err, errXNULayout), errors.Is(err, errXNUDenied):
		return s, &heldRefusal{PID: h.PID, Err: err}
	case err != nil:
		return s, errHeldMoved // closed, another family now, or the process exited
	case xnuID(s) != h.Inode:
		return s, errHeldMoved
	}
	return s, nil
}

// errXNUDenied is proc_info's refusal (EPERM): another user's process.
var errXNUDenied = errors.New("macOS lets a process read the descriptors of its own user's processes only (proc_info: EPERM)")
