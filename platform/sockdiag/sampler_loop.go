package sockdiag

import (
	"cmp"
	"errors"
	"slices"
)

// sampleTCPStates are the TCP states of a connection that can still be
// sending: a dump for sampling skips listeners and TIME_WAIT.
const sampleTCPStates = 1<<StateEstablished | 1<<StateSynSent | 1<<StateFinWait1 |
	1<<StateFinWait2 | 1<<StateCloseWait | 1<<StateLastAck | 1<<StateClosing

// tracked is one sender socket as the sampling goroutine knows it.
type tracked struct {
	ino     Inode
	kind    Kind // 0 until it is found in a listing
	cookie  Cookie
	key     tcpKey  // TCP: the connection, for exact lookups
	peerKey *tcpKey // TCP: the receiving end, when it is local
	gone    bool

	// this tick's outcome
	goneNow bool
	ok      bool
	sample  Sample
}

// loopState belongs to the sampling goroutine: what it tracks and the
// buffers it reuses from tick to tick.
type loopState struct {
	p       prober
	version uint64
	tracked map[Inode]*tracked
	order   []*tracked

	unixBuf  []UnixSocket
	tcpBuf   []TCPSocket
	unixIdx  map[Inode]int
	tcpIdx   map[Inode]int
	tupleIdx map[tupleKey]int
}

func newLoopState(p prober) loopState {
	return loopState{
		p: p, tracked: map[Inode]*tracked{},
		unixIdx: map[Inode]int{}, tcpIdx: map[Inode]int{}, tupleIdx: map[tupleKey]int{},
	}
}

// reconcile makes the tracked sockets those of groups: new ones start
// unresolved, dropped ones are forgotten, the others keep their state.
// Gone ones are forgotten too: a changed set is the caller's new word on
// which sockets exist, so they are looked for again (and reported gone
// again if they still are).
func (l *loopState) reconcile(groups map[string][]Inode) {
	want := map[Inode]bool{}
	for _, inos := range groups {
		for _, ino := range inos {
			want[ino] = true
		}
	}
	for ino, t := range l.tracked {
		if !want[ino] || t.gone {
			delete(l.tracked, ino)
		}
	}
	l.order = l.order[:0]
	for ino := range want {
		t := l.tracked[ino]
		if t == nil {
			t = &tracked{ino: ino, cookie: NoCookie}
			l.tracked[ino] = t
		}
		l.order = append(l.order, t)
	}
	slices.SortFunc(l.order, func(a, b *tracked) int { return cmp.Compare(a.ino, b.ino) })
}

// observe samples every tracked socket once.
func (l *loopState) observe(mode Mode) error {
	for _, t := range l.order {
		t.goneNow, t.ok = false, false
	}
	if mode == ModeExact {
		return l.observeExact()
	}
	return l.observeDump()
}

// account adds this tick's samples of senders to w.
func (l *loopState) account(w *window, senders []Inode, err error) {
	w.ticks++
	if err != nil {
		w.errors++
		w.lastErr = err
		return
	}
	w.lastSum, w.lastN = 0, 0
	for _, ino := range senders {
		t := l.tracked[ino]
		if t == nil {
			continue
		}
		if t.goneNow {
			w.gone = append(w.gone, ino)
		}
		if t.ok {
			w.add(t.sample)
			w.lastSum += float64(t.sample.InFlight)
			w.lastN++
		}
	}
}

func (t *tracked) markGone() {
	t.gone, t.goneNow = true, true
}

// needs says which listings this tick must read: the families of the
// tracked sockets, and both while one is not yet found.
func (l *loopState) needs() (unixDump, tcpDump bool) {
	for _, t := range l.order {
		if t.gone {
			continue
		}
		switch t.kind {
		case KindUnix:
			unixDump = true
		case KindTCP:
			tcpDump = true
		default:
			return true, true
		}
	}
	return unixDump, tcpDump
}

func (l *loopState) observeDump() error {
	needUnix, needTCP := l.needs()
	if needUnix {
		if err := l.dumpUnix(); err != nil {
			return err
		}
	}
	if needTCP {
		if err := l.dumpTCP(); err != nil {
			return err
		}
	}
	for _, t := range l.order {
		if t.gone {
			continue
		}
		if t.kind == 0 && !l.resolve(t) {
			t.markGone()
			continue
		}
		var err error
		if t.kind == KindUnix {
			err = l.sampleUnixFromDump(t)
		} else {
			err = l.sampleTCPFromDump(t)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *loopState) dumpUnix() error {
	var err error
	l.unixBuf, err = l.p.unixDump(l.unixBuf[:0], unixShowSample)
	if err != nil {
		return err
	}
	clear(l.unixIdx)
	for i := range l.unixBuf {
		l.unixIdx[l.unixBuf[i].Inode] = i
	}
	return nil
}

func (l *loopState) dumpTCP() error {
	l.tcpBuf = l.tcpBuf[:0]
	for _, fam := range []uint8{afInet, afInet6} {
		var err error
		if l.tcpBuf, err = l.p.tcpDump(l.tcpBuf, fam, sampleTCPStates); err != nil {
			return err
		}
	}
	clear(l.tcpIdx)
	clear(l.tupleIdx)
	for i := range l.tcpBuf {
		s := &l.tcpBuf[i]
		if s.Inode != 0 {
			l.tcpIdx[s.Inode] = i
		}
		l.tupleIdx[tupleOf(s.Local, s.Remote)] = i
	}
	return nil
}

// resolve finds a new socket in this tick's listings and remembers what
// identifies it from now on: its family and cookie, and for TCP the
// 4-tuples of both ends.
func (l *loopState) resolve(t *tracked) bool {
	if i, ok := l.unixIdx[t.ino]; ok {
		t.kind, t.cookie = KindUnix, l.unixBuf[i].Cookie
		return true
	}
	i, ok := l.tcpIdx[t.ino]
	if !ok {
		return false
	}
	s := &l.tcpBuf[i]
	t.kind, t.cookie, t.key = KindTCP, s.Cookie, s.key()
	if j, ok := l.tupleIdx[tupleOf(s.Remote, s.Local)]; ok {
		k := l.tcpBuf[j].key()
		t.peerKey = &k
	}
	return true
}

func (l *loopState) sampleUnixFromDump(t *tracked) error {
	i, ok := l.unixIdx[t.ino]
	if !ok || l.unixBuf[i].Cookie != t.cookie {
		t.markGone()
		return nil
	}
	u := &l.unixBuf[i]
	var recv *UnixSocket
	if j, ok := l.unixIdx[u.Peer]; ok && u.Peer != 0 {
		recv = &l.unixBuf[j]
	}
	return t.takeUnix(u, recv)
}

func (t *tracked) takeUnix(u, recv *UnixSocket) error {
	if !u.Mem.Valid {
		return errNoMemInfo
	}
	t.sample = Sample{InFlight: int64(u.Mem.WmemAlloc), Limit: int64(u.Mem.Sndbuf)}
	if recv != nil && recv.HasQueues {
		t.sample.HasRecv, t.sample.RecvQueued = true, int64(recv.RQueue)
	}
	t.ok = true
	return nil
}

func (l *loopState) sampleTCPFromDump(t *tracked) error {
	i, ok := l.tcpIdx[t.ino]
	if !ok || l.tcpBuf[i].Cookie != t.cookie {
		t.markGone()
		return nil
	}
	s := &l.tcpBuf[i]
	var recv *TCPSocket
	if j, ok := l.tupleIdx[tupleOf(s.Remote, s.Local)]; ok {
		recv = &l.tcpBuf[j]
	}
	return t.takeTCP(s, recv)
}

func (t *tracked) takeTCP(s, recv *TCPSocket) error {
	if !s.Mem.Valid {
		return errNoMemInfo
	}
	t.sample = Sample{InFlight: int64(s.Mem.WmemQueued), Limit: int64(s.Mem.Sndbuf)}
	if recv != nil {
		t.sample.HasRecv, t.sample.RecvQueued = true, int64(recv.RQueue)
	}
	t.ok = true
	return nil
}

// observeExact looks every tracked socket and its receiver up on its own.
// A socket not yet found is looked for as a unix socket first (by inode),
// then in a TCP listing (inet_diag cannot look up by inode).
func (l *loopState) observeExact() error {
	tcpPending := false
	for _, t := range l.order {
		if t.gone || t.kind == KindTCP {
			continue
		}
		u, err := l.p.unixExact(t.ino, t.cookie, unixShowSample)
		if errors.Is(err, ErrGone) {
			if t.kind == 0 {
				tcpPending = true
			} else {
				t.markGone()
			}
			continue
		}
		if err != nil {
			return err
		}
		if t.kind == 0 {
			t.kind, t.cookie = KindUnix, u.Cookie
		}
		if err := l.exactUnixSample(t, &u); err != nil {
			return err
		}
	}
	if tcpPending {
		if err := l.resolveTCP(); err != nil {
			return err
		}
	}
	return l.observeExactTCP()
}

func (l *loopState) exactUnixSample(t *tracked, u *UnixSocket) error {
	if u.Peer == 0 {
		return t.takeUnix(u, nil)
	}
	peer, err := l.p.unixExact(u.Peer, NoCookie, unixShowSample)
	if errors.Is(err, ErrGone) {
		return t.takeUnix(u, nil)
	}
	if err != nil {
		return err
	}
	return t.takeUnix(u, &peer)
}

// resolveTCP finds the sockets no unix lookup knew in a TCP listing; those
// it does not have either are gone.
func (l *loopState) resolveTCP() error {
	if err := l.dumpTCP(); err != nil {
		return err
	}
	for _, t := range l.order {
		if !t.gone && t.kind == 0 && !l.resolve(t) {
			t.markGone()
		}
	}
	return nil
}

func (l *loopState) observeExactTCP() error {
	for _, t := range l.order {
		if t.gone || t.kind != KindTCP {
			continue
		}
		s, err := l.p.tcpExact(&t.key, t.cookie)
		if errors.Is(err, ErrGone) || (err == nil && s.Inode != t.ino) {
			// Inode 0: the connection outlives its files (FIN_WAIT,
			// TIME_WAIT) but no process sends on it any more.
			t.markGone()
			continue
		}
		if err != nil {
			return err
		}
		var recv *TCPSocket
		if t.peerKey != nil {
			r, err := l.p.tcpExact(t.peerKey, NoCookie)
			if err != nil && !errors.Is(err, ErrGone) {
				return err
			}
			if err == nil && r.Inode != 0 {
				recv = &r
			}
		}
		if err := t.takeTCP(&s, recv); err != nil {
			return err
		}
	}
	return nil
}
