package engine

import (
	"slices"

	"nbdscope/probe/sockdiag"
)

// lookCache keeps each side's last look for its data connections, so
// that a poll whose processes hold the very sockets they held at the
// last look reuses what it found rather than describe them again (two
// namespace-wide sock_diag dumps a look, a look at every poll of each
// side: half of the looks' cost, a sixth of the explorer's own CPU).
//
// The reuse is exact: a socket is its inode, and a connected unix
// socket's peer, or a TCP connection's 4-tuple, does not change while it
// lives. So a look is kept only when every unix or TCP socket of the
// sender was connected or listening: one still connecting (its peer not
// known yet) could become a data connection under the same inode and fd.
// A socket in neither listing (netlink, UDP) never carries the data.
type lookCache struct {
	bySide map[string]look
}

type look struct {
	snd, rcv []sockdiag.FD // the sockets each process held, in fd order
	senders  []sockdiag.FD
	allUnix  bool // every sender a unix socket (the kernel measures them)
}

// reuse is the senders of side's last look if both processes hold the
// same sockets (by PID, fd and inode) as then.
func (c *lookCache) reuse(side string, snd, rcv []sockdiag.FD) ([]sockdiag.FD, bool, bool) {
	if c == nil {
		return nil, false, false
	}
	l, ok := c.bySide[side]
	if !ok || !slices.Equal(l.snd, snd) || !slices.Equal(l.rcv, rcv) {
		return nil, false, false
	}
	return slices.Clone(l.senders), l.allUnix, true
}

// keep keeps a look that found senders, if the sender's sockets (ss, as
// described) are settled; any other look forgets the side's last.
func (c *lookCache) keep(side string, snd, rcv []sockdiag.FD, ss []sockdiag.Socket, senders []sockdiag.FD, allUnix bool) {
	if c == nil {
		return
	}
	if c.bySide == nil {
		c.bySide = map[string]look{}
	}
	if len(senders) == 0 || !settled(ss) {
		delete(c.bySide, side)
		return
	}
	c.bySide[side] = look{snd: slices.Clone(snd), rcv: slices.Clone(rcv), senders: slices.Clone(senders), allUnix: allUnix}
}

// settled: no unix or TCP socket among ss may still become connected.
func settled(ss []sockdiag.Socket) bool {
	for _, s := range ss {
		switch s.Kind {
		case sockdiag.KindUnix:
			if s.Peer == 0 && s.Unix.State != sockdiag.StateListen {
				return false
			}
		case sockdiag.KindTCP:
			if s.Peer == 0 && s.TCP.State != sockdiag.StateListen {
				return false
			}
		}
	}
	return true
}
