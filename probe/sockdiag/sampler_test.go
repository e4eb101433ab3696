package sockdiag

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"syscall"
	"testing"
)

// fakeKernel is a prober over a table of sockets the test edits.
type fakeKernel struct {
	unix    map[Inode]UnixSocket
	tcp     []TCPSocket
	fail    error
	calls   int // round trips (a batch is one)
	lookups int // exact lookups
	closed  bool

	// held: the descriptors of processes (pid → fd → inode) heldMem reads
	// through, the processes that refuse, and the reads made.
	fds       map[int]map[int]Inode
	refuse    map[int]bool
	heldReads int
	forgotten map[int]bool
}

func newFakeKernel() *fakeKernel { return &fakeKernel{unix: map[Inode]UnixSocket{}} }

func (k *fakeKernel) unixDump(dst []UnixSocket, show uint32) ([]UnixSocket, error) {
	k.calls++
	if k.fail != nil {
		return dst, k.fail
	}
	for _, ino := range slices.Sorted(func(yield func(Inode) bool) {
		for ino := range k.unix {
			if !yield(ino) {
				return
			}
		}
	}) {
		dst = append(dst, k.unix[ino])
	}
	return dst, nil
}

func (k *fakeKernel) exactBatch(reqs []exactReq, res []exactRes) error {
	k.calls++
	if k.fail != nil {
		return k.fail
	}
	for i, r := range reqs {
		k.lookups++
		if r.kind == KindUnix {
			res[i].unix, res[i].err = k.unixExact(r.ino, r.cookie)
		} else {
			res[i].tcp, res[i].err = k.tcpExact(&r.key, r.cookie)
		}
	}
	return nil
}

func (k *fakeKernel) unixExact(ino Inode, cookie Cookie) (UnixSocket, error) {
	u, ok := k.unix[ino]
	if !ok {
		return UnixSocket{}, &KernelError{Errno: syscall.ENOENT}
	}
	if cookie != NoCookie && cookie != u.Cookie {
		return UnixSocket{}, &KernelError{Errno: syscall.ESTALE}
	}
	return u, nil
}

func (k *fakeKernel) tcpDump(dst []TCPSocket, family, ext uint8, states uint32) ([]TCPSocket, error) {
	k.calls++
	if k.fail != nil {
		return dst, k.fail
	}
	for _, s := range k.tcp {
		if s.Family == family && states&(1<<s.State) != 0 {
			dst = append(dst, s)
		}
	}
	return dst, nil
}

func (k *fakeKernel) tcpExact(key *tcpKey, cookie Cookie) (TCPSocket, error) {
	for _, s := range k.tcp {
		if s.key() == *key {
			if cookie != NoCookie && cookie != s.Cookie {
				return TCPSocket{}, &KernelError{Errno: syscall.ESTALE}
			}
			return s, nil
		}
	}
	return TCPSocket{}, &KernelError{Errno: syscall.ENOENT}
}

func (k *fakeKernel) Close() error { k.closed = true; return nil }

// heldMem is Linux's: it does not tell the kind.
func (k *fakeKernel) heldMem(h FD) (MemInfo, Kind, error) {
	k.heldReads++
	if k.refuse[h.PID] {
		return MemInfo{}, 0, &heldRefusal{PID: h.PID, Err: syscall.EPERM}
	}
	if k.fds[h.PID][h.FD] != h.Inode {
		return MemInfo{}, 0, errHeldMoved
	}
	if u, ok := k.unix[h.Inode]; ok {
		return u.Mem, 0, nil
	}
	for _, s := range k.tcp {
		if s.Inode == h.Inode {
			return s.Mem, 0, nil
		}
	}
	return MemInfo{}, 0, errHeldMoved
}

func (k *fakeKernel) forgetHolders(keep map[int]bool) {
	k.forgotten = map[int]bool{}
	for pid := range k.fds {
		if !keep[pid] {
			k.forgotten[pid] = true
		}
	}
}

// hold says process pid holds ino as descriptor fd.
func (k *fakeKernel) hold(pid, fd int, ino Inode) FD {
	if k.fds == nil {
		k.fds = map[int]map[int]Inode{}
	}
	if k.fds[pid] == nil {
		k.fds[pid] = map[int]Inode{}
	}
	k.fds[pid][fd] = ino
	return FD{PID: pid, FD: fd, Inode: ino}
}

// pair adds a connected unix pair: the sender with wmem in flight against
// sndbuf, the receiver with rq bytes queued.
func (k *fakeKernel) pair(snd, rcv Inode, wmem, sndbuf, rq uint32) {
	k.unix[snd] = UnixSocket{Inode: snd, Cookie: Cookie{uint32(snd), 1}, Peer: rcv, HasQueues: true, WQueue: wmem,
		Mem: MemInfo{Valid: true, Fields: 9, WmemAlloc: wmem, Sndbuf: sndbuf}}
	k.unix[rcv] = UnixSocket{Inode: rcv, Cookie: Cookie{uint32(rcv), 1}, Peer: snd, HasQueues: true, RQueue: rq,
		Mem: MemInfo{Valid: true, Fields: 9, Sndbuf: sndbuf}}
}

func (k *fakeKernel) tcpConn(snd, rcv Inode, queued, sndbuf, rq uint32) {
	lo := netip.MustParseAddr("127.0.0.1")
	a := netip.AddrPortFrom(lo, uint16(snd))
	b := netip.AddrPortFrom(lo, uint16(rcv))
	k.tcp = append(k.tcp,
		TCPSocket{Inode: snd, Cookie: Cookie{uint32(snd), 2}, Family: afInet, State: StateEstablished, Local: a, Remote: b,
			Mem: MemInfo{Valid: true, Fields: 9, WmemQueued: queued, Sndbuf: sndbuf}},
		TCPSocket{Inode: rcv, Cookie: Cookie{uint32(rcv), 2}, Family: afInet, State: StateEstablished, Local: b, Remote: a,
			RQueue: rq, Mem: MemInfo{Valid: true, Fields: 9, Sndbuf: sndbuf}})
}

func testSampler(t *testing.T, k *fakeKernel, mode Mode) *Sampler {
	t.Helper()
	s, err := newSampler(SamplerConfig{Mode: mode}, k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ticks(s *Sampler, n int) {
	for range n {
		s.tick()
	}
}

var modes = []Mode{ModeAuto, ModeDump, ModeExact}

func TestSamplerFullAndEmpty(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			k := newFakeKernel()
			k.pair(10, 11, 200000, 212992, 180000) // 94%: full
			k.pair(12, 13, 100000, 212992, 90000)  // 47%: neither
			k.pair(20, 21, 1000, 212992, 0)        // 0.5%: empty
			k.tcpConn(30, 31, 60000, 65536, 50000) // 92%: full
			s := testSampler(t, k, mode)
			s.Set("A", []Inode{12, 10, 10, 30}) // unordered, a duplicate
			s.Set("B", []Inode{20})
			ticks(s, 10)
			a := s.Take("A")
			if a.Samples != 30 || a.Ticks != 10 || a.FullPct < 66.6 || a.FullPct > 66.7 || a.EmptyPct != 0 ||
				a.MeanBytes != (200000+100000+60000)/3.0 || a.Limit != 212992 || a.RecvSamples != 30 ||
				a.RecvMeanBytes != (180000+90000+50000)/3.0 || a.LastBytes != a.MeanBytes || len(a.Gone) != 0 || a.Errors != 0 {
				t.Errorf("A = %+v", a)
			}
			b := s.Take("B")
			if b.Samples != 10 || b.EmptyPct != 100 || b.FullPct != 0 || !b.OK() {
				t.Errorf("B = %+v", b)
			}
			if again := s.Take("A"); again.OK() || again.Ticks != 0 {
				t.Errorf("a window right after Take = %+v, want empty", again)
			}
			if none := s.Take("nope"); none.OK() {
				t.Errorf("unknown group = %+v", none)
			}
		})
	}
}

func TestSamplerGone(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			k := newFakeKernel()
			k.pair(10, 11, 5, 100, 0)
			k.pair(12, 13, 5, 100, 0)
			k.tcpConn(30, 31, 5, 100, 0)
			s := testSampler(t, k, mode)
			s.Set("A", []Inode{10, 12, 30, 99}) // 99 was never a socket
			ticks(s, 3)
			delete(k.unix, 10)                                       // closed
			k.unix[12] = UnixSocket{Inode: 12, Cookie: Cookie{7, 7}} // inode reused by a new socket
			k.tcp = k.tcp[1:]                                        // the TCP sender closed
			ticks(s, 3)
			f := s.Take("A")
			slices.Sort(f.Gone)
			if !slices.Equal(f.Gone, []Inode{10, 12, 30, 99}) || f.Samples != 3*3 || f.Errors != 0 {
				t.Fatalf("window = %+v; want 10, 12, 30, 99 gone, once each, and 9 samples", f)
			}
			ticks(s, 2)
			if f := s.Take("A"); len(f.Gone) != 0 || f.Samples != 0 || f.Ticks != 2 {
				t.Fatalf("after they went: %+v", f)
			}
			// Set again, the same inode is a new socket and is sampled.
			k.pair(10, 11, 5, 100, 0)
			s.Set("A", []Inode{12})
			s.Set("A", []Inode{10})
			ticks(s, 1)
			if f := s.Take("A"); f.Samples != 1 {
				t.Fatalf("a socket set anew: %+v", f)
			}
		})
	}
}

func TestSamplerLiveSetAndErrors(t *testing.T) {
	k := newFakeKernel()
	k.pair(10, 11, 95, 100, 0)
	k.pair(20, 21, 5, 100, 0)
	s := testSampler(t, k, ModeDump)
	s.Set("A", []Inode{10})
	ticks(s, 2)
	s.Set("A", []Inode{10, 20})
	ticks(s, 2)
	f := s.Take("A")
	if f.Samples != 6 || f.FullPct != 100*4/6.0 || f.LastBytes != 50 {
		t.Errorf("window across a change = %+v", f)
	}
	calls := k.calls
	s.Set("A", []Inode{20, 10}) // the same set: no tick is lost
	if s.version != s.loop.version {
		t.Error("setting the same sockets again counted as a change")
	}
	k.fail = errors.New("netlink broke")
	ticks(s, 3)
	f = s.Take("A")
	if f.Errors != 3 || f.Ticks != 3 || f.Samples != 0 || f.LastError == nil || f.OK() {
		t.Errorf("failing ticks = %+v", f)
	}
	if k.calls == calls {
		t.Error("no lookups were made")
	}
	s.Remove("A")
	if f := s.Take("A"); f.Ticks != 0 {
		t.Errorf("a removed group still has a window: %+v", f)
	}
}

func TestSamplerNoMemInfo(t *testing.T) {
	k := newFakeKernel()
	k.unix[10] = UnixSocket{Inode: 10}
	s := testSampler(t, k, ModeExact)
	s.Set("A", []Inode{10})
	ticks(s, 1)
	if f := s.Take("A"); f.Errors != 1 || !errors.Is(f.LastError, errNoMemInfo) {
		t.Errorf("a reply without SK_MEMINFO: %+v", f)
	}
}

// TestSamplerLookupCounts: a tick is one round trip in either mode: one
// unix dump, or one batch of two lookups per connection (sender and
// receiver). ModeAuto dumps while the namespace has few unix sockets, and
// looks up once it has many; TCP it always looks up.
func TestSamplerLookupCounts(t *testing.T) {
	k := newFakeKernel()
	var set []Inode
	for i := range Inode(8) {
		k.pair(100+2*i, 101+2*i, 5, 100, 0)
		set = append(set, 100+2*i)
	}
	k.tcpConn(30, 31, 5, 100, 0)
	k.tcpConn(32, 33, 5, 100, 0)
	set = append(set, 30, 32)
	check := func(mode Mode, calls, lookups int) {
		t.Helper()
		s := testSampler(t, k, mode)
		s.Set("A", set)
		ticks(s, 1) // finds them
		k.calls, k.lookups = 0, 0
		ticks(s, 1)
		if k.calls != calls || k.lookups != lookups {
			t.Errorf("%v with %d unix sockets: %d round trips and %d lookups per tick for 8 unix and 2 TCP connections; want %d and %d",
				mode, len(k.unix), k.calls, k.lookups, calls, lookups)
		}
	}
	check(ModeExact, 1, 20)
	check(ModeDump, 3, 0) // unix, TCP over IPv4, over IPv6
	check(ModeAuto, 2, 4) // the unix dump and a batch for TCP
	for i := range Inode(dumpPerLookup * 16) {
		k.unix[1000+i] = UnixSocket{Inode: 1000 + i}
	}
	check(ModeAuto, 1, 20)
}

// TestSamplerRecvEvery: receivers looked up on every 4th tick only, the
// sender on every one.
func TestSamplerRecvEvery(t *testing.T) {
	k := newFakeKernel()
	k.pair(10, 11, 95, 100, 7)
	k.tcpConn(30, 31, 5, 100, 3)
	s, err := newSampler(SamplerConfig{Mode: ModeExact, RecvEvery: 4}, k)
	if err != nil {
		t.Fatal(err)
	}
	s.Set("A", []Inode{10, 30})
	ticks(s, 1) // found from the listings, receivers and all
	s.Take("A")
	ticks(s, 8)
	f := s.Take("A")
	if f.Samples != 16 || f.RecvSamples != 4 || f.RecvMeanBytes != 5 {
		t.Errorf("8 ticks with receivers every 4th: %+v", f)
	}
}

func TestSamplerConfig(t *testing.T) {
	for _, cfg := range []SamplerConfig{{Rate: -1}, {Rate: 0.5}, {Rate: MaxRate + 1}, {Mode: 9}, {RecvEvery: -1}} {
		if _, err := newSampler(cfg, newFakeKernel()); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	s, err := newSampler(SamplerConfig{}, newFakeKernel())
	if err != nil || s.interval.Milliseconds() != 10 || s.mode != ModeAuto {
		t.Errorf("default: interval %v mode %v err %v; want 10ms at 100 Hz", s.interval, s.mode, err)
	}
}

func TestSamplerStops(t *testing.T) {
	k := newFakeKernel()
	s := testSampler(t, k, ModeDump)
	ctx, cancel := context.WithCancel(context.Background())
	s.start(ctx)
	cancel()
	<-s.Done()
	s.Stop() // after the context ended: returns at once
	s.Stop()
	if !k.closed {
		t.Error("the sampler did not close its connection")
	}
}
