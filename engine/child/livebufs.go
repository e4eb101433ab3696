package child

import (
	"errors"
	"fmt"

	"nbdscope/engine/wire"
	"nbdscope/probe/realproc"
	"nbdscope/probe/sockctl"
	"nbdscope/probe/sockdiag"
)

// liveBufs follows a real process's data sockets (a real server's, an
// exec side's client's) and keeps the buffers asked for on each of them,
// new ones within a look of their connect or accept: a real server role
// and an exec role look every tickEvery. It reads back what the sockets
// have (sock_diag's SK_MEMINFO: what getsockopt reads) and the process's
// own values (realproc.Buffers). The caller serialises its use.
type liveBufs struct {
	pid   int
	socks *realproc.Sockets // nil where sock_diag is not available
	bufs  *realproc.Buffers
	conns int
	// snd and rcv are the first data socket's buffers at the last look
	// that found one, own the process's own values as last seen: kept
	// while none is open (a client between runs, carried to the next).
	snd, rcv int
	own      [2]int
	// ours (a local --target's server, which may serve others too): only
	// the sockets whose peer the process peerPID holds (our load's) are
	// followed and changed; none until peerPID is known.
	ours    bool
	peerPID int
}

// onlyPeersOf keeps the sockets followed to those connected to process
// pid's (0: none yet).
func (l *liveBufs) onlyPeersOf(pid int) {
	l.ours, l.peerPID = true, pid
}

// mine are the data sockets to follow: all of them, or (ours) those
// whose peer peerPID holds.
func (l *liveBufs) mine(data []sockdiag.Socket) []sockdiag.Socket {
	if !l.ours {
		return data
	}
	if l.peerPID <= 0 {
		return nil
	}
	fds, err := sockdiag.ProcessSockets(l.peerPID)
	if err != nil {
		return nil
	}
	peers := map[sockdiag.Inode]bool{}
	for _, fd := range fds {
		peers[fd.Inode] = true
	}
	var out []sockdiag.Socket
	for _, k := range data {
		if peers[k.Peer] {
			out = append(out, k)
		}
	}
	return out
}

// carry keeps what prev last saw until this one sees sockets of its own
// (an exec side's next run of the client).
func (l *liveBufs) carry(prev *liveBufs) {
	if prev != nil {
		l.snd, l.rcv, l.own = prev.snd, prev.rcv, prev.own
	}
}

// watchBufs starts following pid's data sockets, with the requests in
// want (per option, as setsockopt takes them; 0: the process's own)
// applied to each as it is found. The error is a request's refusal, in a
// sentence with its reason (what names the process); the buffers are
// followed all the same, and a refusal is kept for set to return.
func watchBufs(pid int, want [2]int, what string) (*liveBufs, error) {
	l := &liveBufs{pid: pid, bufs: realproc.ControlBuffers(pid)}
	if s, err := realproc.WatchSockets(pid); err == nil {
		l.socks = s
	}
	for o, req := range want {
		if req <= 0 {
			continue
		}
		// Kept for the sockets to come: none is open yet.
		if _, _, err := l.bufs.Set(sockctl.Option(o), req); err != nil {
			return l, fmt.Errorf("%s's %s cannot be set: %s", what, sockctl.Option(o), realproc.Refusal(err))
		}
	}
	return l, nil
}

// look scans the process's sockets: new data sockets get the buffers in
// force; it notes how many there are and the first one's buffers.
func (l *liveBufs) look() (sockdiag.Socket, bool) {
	if l.socks == nil {
		return sockdiag.Socket{}, false
	}
	sc, err := l.socks.Scan()
	if err != nil {
		return sockdiag.Socket{}, false
	}
	data := l.mine(sc.Data)
	if l.bufs.Track(data) > 0 {
		// The scan predates the buffers just set on the new sockets: read
		// them again, or the first poll after a connect reports the
		// process's own value as the effective one (and a request that
		// took is warned about as clamped).
		if again, err := l.socks.Scan(); err == nil {
			data = l.mine(again.Data)
			l.bufs.Track(data)
		}
	}
	l.conns = len(data)
	for o := range l.own {
		if own := l.bufs.Own(sockctl.Option(o)); own > 0 {
			l.own[o] = own
		}
	}
	// The first data socket of the process, else of one it started (a
	// shell's real client).
	for _, k := range data {
		if len(k.Holders) > 0 && k.Holders[0].PID == l.pid {
			l.snd, l.rcv = memSndRcv(k)
			return k, true
		}
	}
	for _, k := range data {
		if len(k.Holders) > 0 {
			l.snd, l.rcv = memSndRcv(k)
			return k, true
		}
	}
	return sockdiag.Socket{}, false
}

// set asks for req bytes of buffer o on every data socket now and later
// (0: each socket's own value back): the reply has the effective value
// read back from a real socket and how many sockets it reached, or the
// refusal with its reason (what names the process: "the real server").
//
// gone says the change failed because the process has exited: for an exec
// side's client, whose runs come and go, that is a change between two
// runs, not a refusal.
func (l *liveBufs) set(o sockctl.Option, req int, what string) (m wire.Msg, gone bool) {
	err := l.bufs.Err()
	var reached, eff int
	if err == nil {
		reached, eff, err = l.bufs.Set(o, req)
	}
	if err != nil {
		var se *sockctl.Error
		gone = errors.As(err, &se) && se.Reason == sockctl.ReasonGone
		return wire.Msg{Type: "error", Err: what + "'s buffers cannot be changed: " + realproc.Refusal(err)}, gone
	}
	switch {
	case reached > 0 && o == sockctl.SendBuf:
		l.snd = eff
	case reached > 0:
		l.rcv = eff
	}
	return wire.Msg{Effective: eff, Reached: reached}, false
}

// report puts the buffers into a poll reply.
func (l *liveBufs) report(m *wire.Msg) {
	m.SndBuf, m.RcvBuf = l.snd, l.rcv
	m.OwnSndBuf, m.OwnRcvBuf = l.own[sockctl.SendBuf], l.own[sockctl.RecvBuf]
}

// close stops following the process.
func (l *liveBufs) close() {
	l.bufs.Close()
	if l.socks != nil {
		l.socks.Close()
	}
}
