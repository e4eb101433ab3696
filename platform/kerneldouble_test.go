package platform

import (
	"errors"

	"golang.org/x/sys/unix"

	"nbdscope/nbd"
)

// xnuKernel is a double of XNU's socket-buffer rules, modelled line by
// line on apple-oss-distributions/xnu (see XNURules for the quotes):
// requests are stored as given (never doubled), sbreserve refuses above
// sb_max*MCLBYTES/(MSIZE+MCLBYTES) before Darwin 23.4 and clamps to
// sb_max from it, and a unix stream send lowers the sender's sb_hiwat by
// the bytes it queued in the peer.
type xnuKernel struct {
	sbMax       int
	release     string
	nmbclusters int
	sendspace   int  // net.local.stream.sendspace: a fresh socket's hiwat
	rawReadback bool // getsockopt returns sb_hiwat alone (XNU before 2782)
	asked       []int
}

func newXNU(release string) *xnuKernel {
	return &xnuKernel{sbMax: 8 << 20, release: release, nmbclusters: 131072, sendspace: 8192} // a 16 GB Mac: 256 MB mbuf pool (uipc_mbuf.c ncl_table)
}

func (k *xnuKernel) clamps() bool { return xnuClampsAbove(k.release) }

// xnuSocket is one unix stream socket: so_snd.sb_hiwat and the peer's
// unp_cc (the bytes this socket queued in the peer's receive buffer).
type xnuSocket struct {
	k      *xnuKernel
	hiwat  int
	unpCC  int
	rcvHiw int
}

func (k *xnuKernel) socket() *xnuSocket {
	return &xnuSocket{k: k, hiwat: k.sendspace, rcvHiw: k.sendspace}
}

// sbreserve is uipc_socket2.c's, for the kernel's release.
func (s *xnuSocket) sbreserve(hiwat *int, cc int) bool {
	if s.k.clamps() {
		if cc > s.k.sbMax {
			if *hiwat == s.k.sbMax {
				return false
			}
			cc = s.k.sbMax
		}
	} else if uint64(cc) > uint64(s.k.sbMax)*2048/(256+2048) {
		return false
	}
	*hiwat = cc
	return true
}

// setsockopt is sosetoptlock's SO_SNDBUF/SO_RCVBUF case.
func (s *xnuSocket) setsockopt(which nbd.SockBuf, optval int) error {
	s.k.asked = append(s.k.asked, optval)
	if optval < 1 {
		return unix.EINVAL
	}
	sb := &s.hiwat
	if which == nbd.RecvBuf {
		sb = &s.rcvHiw
	}
	if !s.sbreserve(sb, optval) {
		return unix.ENOBUFS
	}
	return nil
}

// getsockopt is sogetoptlock's: SO_SNDBUF adds back the bytes queued in
// the peer (hiwat += unp->unp_conn->unp_cc) unless rawReadback.
func (s *xnuSocket) getsockopt(which nbd.SockBuf) int {
	if which == nbd.RecvBuf {
		return s.rcvHiw
	}
	if s.k.rawReadback {
		return s.hiwat
	}
	return s.hiwat + s.unpCC
}

// send is uipc_send's SOCK_STREAM case for n bytes appended to the peer:
// snd->sb_hiwat -= rcv->sb_cc - unp->unp_conn->unp_cc (never below 0).
func (s *xnuSocket) send(n int) {
	s.hiwat = max(s.hiwat-n, 0)
	s.unpCC += n
}

// peerRead is uipc_rcvd's: snd->sb_hiwat += unp->unp_cc - rcv->sb_cc.
func (s *xnuSocket) peerRead(n int) {
	n = min(n, s.unpCC)
	s.hiwat += n
	s.unpCC -= n
}

func (k *xnuKernel) Set(which nbd.SockBuf, size int) (int, error) {
	s := k.socket()
	if err := s.setsockopt(which, size); err != nil {
		return 0, err
	}
	return s.getsockopt(which), nil
}

func (k *xnuKernel) Get(which nbd.SockBuf) (int, error) { return k.socket().getsockopt(which), nil }

func (k *xnuKernel) Sysctl(name string) (int, error) {
	switch name {
	case "kern.ipc.maxsockbuf":
		return k.sbMax, nil
	case "kern.ipc.nmbclusters":
		return k.nmbclusters, nil
	case "net.local.stream.sendspace", "net.local.stream.recvspace":
		return k.sendspace, nil
	}
	return 0, errors.New("no such sysctl")
}

func (k *xnuKernel) Release() string { return k.release }

// linuxKernel is a double of Linux's: sock_setsockopt stores
// max(min(val, wmem_max)*2, SOCK_MIN_SNDBUF).
type linuxKernel struct {
	wmemMax int
	asked   []int
}

func (k *linuxKernel) Set(which nbd.SockBuf, size int) (int, error) {
	k.asked = append(k.asked, size)
	return max(min(size, k.wmemMax)*2, 4608), nil
}

func (k *linuxKernel) Get(nbd.SockBuf) (int, error) { return 212992, nil }

func (k *linuxKernel) Sysctl(name string) (int, error) {
	if name == "net.core.wmem_max" || name == "net.core.rmem_max" {
		return k.wmemMax, nil
	}
	return 0, errors.New("no such sysctl")
}

func (k *linuxKernel) Release() string { return "6.1.0" }

var errNoSysctl = errors.New("no such sysctl")
