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
	peer    Inode   // unix: the receiving end (a connected socket's peer stays)
	key     tcpKey  // TCP: the connection, for exact lookups
	peerKey *tcpKey // TCP: the receiving end, when it is local
	gone    bool
	// holder is the descriptor the socket is read through (held.go);
	// PID 0 when there is none, or no longer one; refusal says why, when
	// its process refused.
	holder  FD
	refusal error

	// this tick's outcome
	goneNow bool
	ok      bool
	sample  sample
}

// loopState belongs to the sampling goroutine: what it tracks and the
// buffers it reuses from tick to tick.
type loopState struct {
	p         prober
	recvEvery int // look receivers up on every recvEvery-th tick
	ticks     int
	version   uint64
	tracked   map[Inode]*tracked
	order     []*tracked
	refused   map[int]bool // processes whose descriptors cannot be duplicated

	unixBuf []UnixSocket
	tcpBuf  []TCPSocket
	// unixCount is the size of the last unix dump, sinceUnixDump the
	// ticks since: ModeAuto's measure of what a dump costs.
	unixCount     int
	sinceUnixDump int

	reqs     []exactReq
	res      []exactRes
	slots    []exactSlot
	unixIdx  map[Inode]int
	tcpIdx   map[Inode]int
	tupleIdx map[tupleKey]int
}

func newLoopState(p prober, recvEvery int) loopState {
	return loopState{
		p: p, recvEvery: recvEvery, tracked: map[Inode]*tracked{}, refused: map[int]bool{},
		unixIdx: map[Inode]int{}, tcpIdx: map[Inode]int{}, tupleIdx: map[tupleKey]int{},
	}
}

// reconcile makes the tracked sockets those of groups: new ones start
// unresolved, dropped ones are forgotten, the others keep their state.
// Gone ones are forgotten too: a changed set is the caller's new word on
// which sockets exist, so they are looked for again (and reported gone
// again if they still are).
func (l *loopState) reconcile(groups map[string][]FD) {
	want := map[Inode]FD{}
	for _, fds := range groups {
		for _, fd := range fds {
			if h, ok := want[fd.Inode]; !ok || h.PID == 0 {
				want[fd.Inode] = fd
			}
		}
	}
	for ino, t := range l.tracked {
		if _, ok := want[ino]; !ok || t.gone {
			delete(l.tracked, ino)
		}
	}
	l.order = l.order[:0]
	pids := map[int]bool{}
	for ino, fd := range want {
		t := l.tracked[ino]
		if t == nil {
			t = &tracked{ino: ino, cookie: NoCookie}
			l.tracked[ino] = t
		}
		t.holder = l.holderFor(fd)
		if t.holder.PID != 0 {
			pids[t.holder.PID] = true
		}
		l.order = append(l.order, t)
	}
	l.p.forgetHolders(pids)
	slices.SortFunc(l.order, func(a, b *tracked) int { return cmp.Compare(a.ino, b.ino) })
}

// observe samples every tracked socket once: the families it reads by
// dump from the dumps, the others in one batch of exact lookups.
func (l *loopState) observe(mode Mode) error {
	for _, t := range l.order {
		t.goneNow, t.ok = false, false
	}
	l.observeHeld()
	unixDump, tcpDump := l.plan(mode)
	if unixDump {
		if err := l.dumpUnix(l.unresolved()); err != nil {
			return err
		}
	}
	if tcpDump {
		if err := l.dumpTCP(); err != nil {
			return err
		}
	}
	if err := l.sampleFromDumps(unixDump, tcpDump); err != nil {
		return err
	}
	return l.observeExact()
}

// unixDumpRefresh is how many ticks ModeAuto goes without a unix dump
// while it prefers lookups, before it counts the namespace's sockets again.
const unixDumpRefresh = 400

// dumpPerLookup is how many sockets of the namespace one unix dump may
// hold and still cost no more than one lookup in a batch, per lookup it
// replaces: measured here a dump costs about 20 µs plus 0.65 µs per
// socket, a lookup in a batch 4 µs (BenchmarkUnixDump, BenchmarkUnixBatch16).
const dumpPerLookup = 6

// plan says which families this tick reads by dump. Sockets not yet found
// need both listings (inet_diag cannot look up by inode). ModeAuto reads
// TCP by lookups always (a TCP dump walks the kernel's whole hash table),
// and unix by dump while the namespace has few unix sockets for the
// lookups a batch would make.
func (l *loopState) plan(mode Mode) (unixDump, tcpDump bool) {
	needUnix, needTCP, unixLookups := l.needs()
	if l.unresolved() {
		return true, true
	}
	switch mode {
	case ModeDump:
		return needUnix, needTCP
	case ModeExact:
		return false, false
	}
	if !needUnix {
		return false, false
	}
	l.sinceUnixDump++
	cheaper := l.unixCount <= dumpPerLookup*unixLookups
	return cheaper || l.sinceUnixDump >= unixDumpRefresh, false
}

// account adds this tick's samples of senders to w.
func (l *loopState) account(w *window, senders []FD, err error) {
	w.ticks++
	if err != nil {
		w.errors++
		w.lastErr = err
		return
	}
	w.lastSum, w.lastN = 0, 0
	for _, fd := range senders {
		t := l.tracked[fd.Inode]
		if t == nil {
			continue
		}
		if t.goneNow {
			w.gone = append(w.gone, fd.Inode)
			if t.refusal != nil {
				w.refused = t.refusal
			}
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

// needs says which families the tracked sockets are of (both while one
// is not yet found), and how many unix lookups a batch would make.
func (l *loopState) needs() (unix, tcp bool, unixLookups int) {
	for _, t := range l.order {
		if t.gone || t.ok {
			continue
		}
		switch t.kind {
		case KindUnix:
			unix = true
			unixLookups += 2 // the sender and its receiver
		case KindTCP:
			tcp = true
		default:
			unix, tcp = true, true
		}
	}
	return unix, tcp, unixLookups
}

// sampleFromDumps samples the sockets of the families this tick dumped,
// and finds the new ones (which had both dumped).
func (l *loopState) sampleFromDumps(unixDump, tcpDump bool) error {
	for _, t := range l.order {
		if t.gone || t.ok {
			continue
		}
		if t.kind == 0 && !l.resolve(t) {
			t.markGone()
			continue
		}
		var err error
		switch {
		case t.kind == KindUnix && unixDump:
			err = l.sampleUnixFromDump(t)
		case t.kind == KindTCP && tcpDump:
			err = l.sampleTCPFromDump(t)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dumpUnix reads the namespace's unix sockets, with their peers when new
// sockets are to be found.
func (l *loopState) dumpUnix(withPeers bool) error {
	show := uint32(unixShowSample)
	if withPeers {
		show = unixShowResolve
	}
	var err error
	l.unixBuf, err = l.p.unixDump(l.unixBuf[:0], show)
	if err != nil {
		return err
	}
	clear(l.unixIdx)
	for i := range l.unixBuf {
		l.unixIdx[l.unixBuf[i].Inode] = i
	}
	l.unixCount, l.sinceUnixDump = len(l.unixBuf), 0
	return nil
}

func (l *loopState) dumpTCP() error {
	l.tcpBuf = l.tcpBuf[:0]
	for _, fam := range []uint8{afInet, afInet6} {
		var err error
		if l.tcpBuf, err = l.p.tcpDump(l.tcpBuf, fam, inetExtSample, sampleTCPStates); err != nil {
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
		t.kind, t.cookie, t.peer = KindUnix, l.unixBuf[i].Cookie, l.unixBuf[i].Peer
		return true
	}
	i, ok := l.tcpIdx[t.ino]
	if !ok {
		return false
	}
	s := &l.tcpBuf[i]
	t.kind, t.cookie, t.key = KindTCP, s.Cookie, s.key()
	if peer := l.dumpedTCPPeer(s); peer != nil {
		k := peer.key()
		t.peerKey = &k
	}
	return true
}

// dumpedTCPPeer is the other end of a dumped TCP connection, nil when the
// dump does not list it (an end in another namespace, or not local).
func (l *loopState) dumpedTCPPeer(s *TCPSocket) *TCPSocket {
	if j, ok := l.tupleIdx[tupleOf(s.Remote, s.Local)]; ok {
		return &l.tcpBuf[j]
	}
	return nil
}

// dumpedUnix is the dumped unix socket of inode ino, nil for none (0: a
// socket with no peer) or one the dump does not list.
func (l *loopState) dumpedUnix(ino Inode) *UnixSocket {
	if j, ok := l.unixIdx[ino]; ok && ino != 0 {
		return &l.unixBuf[j]
	}
	return nil
}

func (l *loopState) sampleUnixFromDump(t *tracked) error {
	i, ok := t.inDump(l.unixIdx, func(i int) Cookie { return l.unixBuf[i].Cookie })
	if !ok {
		return nil
	}
	return t.takeUnix(&l.unixBuf[i], l.dumpedUnix(t.peer))
}

// inDump is where t's socket stands in a dump's listing, found by inode
// in idx. A socket the dump lacks, or whose inode now names another socket
// (cookieAt(i) is not the cookie t was found with), is marked gone.
func (t *tracked) inDump(idx map[Inode]int, cookieAt func(i int) Cookie) (int, bool) {
	i, ok := idx[t.ino]
	if !ok || cookieAt(i) != t.cookie {
		t.markGone()
		return 0, false
	}
	return i, true
}

func (t *tracked) takeUnix(u, recv *UnixSocket) error {
	if !u.Mem.Valid {
		return errNoMemInfo
	}
	t.sample = sample{InFlight: int64(u.Mem.WmemAlloc), Limit: int64(u.Mem.Sndbuf)}
	if recv != nil && recv.HasQueues {
		t.sample.HasRecv, t.sample.RecvQueued = true, int64(recv.RQueue)
	}
	t.ok = true
	return nil
}

func (l *loopState) sampleTCPFromDump(t *tracked) error {
	i, ok := t.inDump(l.tcpIdx, func(i int) Cookie { return l.tcpBuf[i].Cookie })
	if !ok {
		return nil
	}
	s := &l.tcpBuf[i]
	return t.takeTCP(s, l.dumpedTCPPeer(s))
}

func (t *tracked) takeTCP(s, recv *TCPSocket) error {
	if !s.Mem.Valid {
		return errNoMemInfo
	}
	t.sample = sample{InFlight: int64(s.Mem.WmemQueued), Limit: int64(s.Mem.Sndbuf)}
	if recv != nil {
		t.sample.HasRecv, t.sample.RecvQueued = true, int64(recv.RQueue)
	}
	t.ok = true
	return nil
}

// observeExact looks every tracked socket not sampled from a dump, and
// its receiver, up on its own, all in one batch.
func (l *loopState) observeExact() error {
	l.reqs, l.slots = l.reqs[:0], l.slots[:0]
	withRecv := l.ticks%l.recvEvery == 0
	l.ticks++
	for _, t := range l.order {
		if t.gone || t.ok {
			continue
		}
		l.slots = append(l.slots, exactSlot{t: t, snd: len(l.reqs), rcv: -1})
		sl := &l.slots[len(l.slots)-1]
		if t.kind == KindUnix {
			l.reqs = append(l.reqs, exactReq{kind: KindUnix, ino: t.ino, cookie: t.cookie})
			if t.peer != 0 && withRecv {
				sl.rcv = len(l.reqs)
				l.reqs = append(l.reqs, exactReq{kind: KindUnix, ino: t.peer, cookie: NoCookie})
			}
			continue
		}
		l.reqs = append(l.reqs, exactReq{kind: KindTCP, key: t.key, cookie: t.cookie})
		if t.peerKey != nil && withRecv {
			sl.rcv = len(l.reqs)
			l.reqs = append(l.reqs, exactReq{kind: KindTCP, key: *t.peerKey, cookie: NoCookie})
		}
	}
	if len(l.reqs) == 0 {
		return nil
	}
	l.res = slices.Grow(l.res[:0], len(l.reqs))[:len(l.reqs)]
	if err := l.p.exactBatch(l.reqs, l.res); err != nil {
		return err
	}
	for _, sl := range l.slots {
		if err := l.takeExact(sl); err != nil {
			return err
		}
	}
	return nil
}

// exactSlot says where a tracked socket's lookups are in a batch.
type exactSlot struct {
	t        *tracked
	snd, rcv int // indexes into the batch; rcv -1 for none
}

func (l *loopState) unresolved() bool {
	for _, t := range l.order {
		if !t.gone && t.kind == 0 {
			return true
		}
	}
	return false
}

// takeExact turns a tracked socket's answers into its sample.
func (l *loopState) takeExact(sl exactSlot) error {
	t, snd := sl.t, &l.res[sl.snd]
	if errors.Is(snd.err, ErrGone) {
		t.markGone()
		return nil
	}
	if snd.err != nil {
		return snd.err
	}
	var rcv *exactRes
	if sl.rcv >= 0 {
		rcv = &l.res[sl.rcv]
		if rcv.err != nil && !errors.Is(rcv.err, ErrGone) {
			return rcv.err
		}
		if rcv.err != nil {
			rcv = nil
		}
	}
	if t.kind == KindUnix {
		var recv *UnixSocket
		if rcv != nil {
			recv = &rcv.unix
		}
		return t.takeUnix(&snd.unix, recv)
	}
	if snd.tcp.Inode != t.ino {
		// Inode 0: the connection outlives its files (FIN_WAIT,
		// TIME_WAIT) but no process sends on it any more.
		t.markGone()
		return nil
	}
	var recv *TCPSocket
	if rcv != nil && rcv.tcp.Inode != 0 {
		recv = &rcv.tcp
	}
	return t.takeTCP(&snd.tcp, recv)
}
