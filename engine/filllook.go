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
//
// Nor is a look repeated while the side's children say that no
// connection came or went (connGen): between our server and our load,
// a data connection is one the server accepted, so the server's count
// of accepted connections, its open ones and the load's tell every
// change. A look keeps the figures of the poll reply before it, and is
// reused without reading /proc at all while the replies carry the same
// (quiet); a reply that differs is looked for again at once, in the
// wake-up that brought it (Pair.readChildren). The /proc scans were 130
// readlinkat and 32 getdents64 a second, a fifth of the explorer's CPU.
// A real server or an exec client is not our child and says nothing of
// its connections: a side with one is scanned at every poll, as before.
type lookCache struct {
	bySide map[string]look
	gens   map[string]connGen // by side: the children's last poll reply
}

type look struct {
	snd, rcv []sockdiag.FD // the sockets each process held, in fd order
	senders  []sockdiag.FD
	allUnix  bool    // every sender a unix socket (the kernel measures them)
	gen      connGen // the replies before the look; zero: not our children's
	ends     [2]int  // the sender's and the receiver's PIDs, when gen is set
}

// connGen is what a side's children said of their connections at a
// poll: the server's accepted and open ones and the load's, by PID.
type connGen struct {
	server, load int // PIDs; 0: not our own child
	accepted     uint64
	open, conns  int
}

// of says whether gen is the figures of these two ends: our server and
// load, neither a tree (a real server, an exec client).
func (g connGen) of(snd, rcv FillProc) bool {
	if g.server == 0 || g.load == 0 || snd.Tree || rcv.Tree {
		return false
	}
	return snd.PID == g.server && rcv.PID == g.load || snd.PID == g.load && rcv.PID == g.server
}

// noteReplies keeps the side's latest connection figures, and says
// whether they differ from those its kept look was made under: the look
// is due again now.
func (c *lookCache) noteReplies(side string, g connGen) bool {
	if c.gens == nil {
		c.gens = map[string]connGen{}
	}
	c.gens[side] = g
	l, ok := c.bySide[side]
	return ok && l.gen != g
}

// quiet is the senders of side's last look if it was made between the
// same two children, and their replies since say no connection came or
// went: no /proc read needed.
func (c *lookCache) quiet(side string, snd, rcv FillProc) ([]sockdiag.FD, bool, bool) {
	if c == nil {
		return nil, false, false
	}
	l, ok := c.bySide[side]
	if !ok || !l.gen.of(snd, rcv) || l.gen != c.gens[side] || l.ends != [2]int{snd.PID, rcv.PID} {
		return nil, false, false
	}
	return slices.Clone(l.senders), l.allUnix, true
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

// keepGen dates side's kept look by the replies before it, when they
// are the figures of its two ends (snd, rcv).
func (c *lookCache) keepGen(side string, snd, rcv FillProc) {
	if c == nil {
		return
	}
	l, ok := c.bySide[side]
	if g := c.gens[side]; ok && g.of(snd, rcv) {
		l.gen, l.ends = g, [2]int{snd.PID, rcv.PID}
		c.bySide[side] = l
	}
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
