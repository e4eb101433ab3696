package sockdiag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// DefaultRate is the sampler's rate when none is given: 100 Hz, 2 s of a
// gauge hold 200 samples per socket (a share within ±3.5 points, one
// standard error at worst). It was issue 24's 200 Hz, whose wake-ups were
// most of the explorer's own CPU (bench/README, "The controller's own
// CPU"). What it costs is measured by BenchmarkSampler (see the package
// documentation).
const DefaultRate = 100

// MaxRate bounds the rate a caller may ask for.
const MaxRate = 10000

// Mode is how the sampler reads its sockets each tick.
type Mode uint8

const (
	// ModeAuto reads TCP connections by exact lookups and unix sockets by
	// one dump per tick while the network namespace has few unix sockets
	// for the lookups it replaces (see dumpPerLookup), by lookups beyond.
	// It is the cheapest of the three wherever it was measured.
	ModeAuto Mode = iota
	// ModeDump reads one dump per family per tick and picks the senders
	// and their receivers out of it. Its cost grows with every socket of
	// the network namespace, not with the set; a TCP dump walks the
	// kernel's whole established hash table, however few sockets it has.
	ModeDump
	// ModeExact looks up each sender and each receiver on its own, all in
	// one batch (one sendmsg, a recvmmsg per 16 replies), whatever else
	// exists. A unix lookup still scans the namespace's unix sockets in
	// the kernel; a TCP lookup is a hash lookup.
	ModeExact
)

func (m Mode) String() string {
	return nameOf(m, "mode", []string{ModeAuto: "auto", ModeDump: "dump", ModeExact: "exact"})
}

// SamplerConfig configures a Sampler.
type SamplerConfig struct {
	Rate float64 // samples per second per socket; 0 means DefaultRate
	Mode Mode
	// RecvEvery looks the receivers up on every RecvEvery-th tick only,
	// where they cost a lookup each (exact lookups; a dump has them
	// anyway); 0 or 1 means every tick. The full and empty shares and the
	// bytes in flight are the sender's and are sampled on every tick; only
	// Fill.RecvSamples counts fewer.
	RecvEvery int
}

// prober is what the sampler needs of a sock_diag connection; *Conn is
// one on Linux, tests use doubles.
type prober interface {
	unixDump(dst []UnixSocket, show uint32) ([]UnixSocket, error)
	tcpDump(dst []TCPSocket, family, ext uint8, states uint32) ([]TCPSocket, error)
	exactBatch(reqs []exactReq, res []exactRes) error
	// heldMem reads the SK_MEMINFO of the socket h names through h's
	// descriptor: a momentary duplicate on Linux (held_linux.go), the
	// descriptor's proc_pidfdinfo on XNU (xnu.go). Its kind is 0 where
	// the reader cannot tell it (Linux: a listing resolves it). It fails with
	// errHeldMoved when the descriptor no longer holds that socket, and
	// with a *heldRefusal when that process's descriptors cannot be read.
	heldMem(h FD) (MemInfo, Kind, error)
	// forgetHolders lets go of what heldMem keeps for processes not in
	// pids (their pidfds).
	forgetHolders(pids map[int]bool)
	Close() error
}

// Sampler samples the send-buffer fill of groups of sender sockets (one
// group per side, say) from a goroutine of its own, until its context ends
// or Stop is called. Set changes a group's sockets while it runs; Take
// returns a group's window and starts a new one.
type Sampler struct {
	mu      sync.Mutex
	groups  map[string][]FD // sorted by inode; PID 0: no holder known
	windows map[string]*window
	version uint64

	interval time.Duration
	mode     Mode
	stop     context.CancelFunc
	done     chan struct{}
	loop     loopState // the goroutine's own
}

// newSampler validates cfg and prepares a sampler reading through p; it
// does not start it.
func newSampler(cfg SamplerConfig, p prober) (*Sampler, error) {
	rate := cfg.Rate
	if rate == 0 {
		rate = DefaultRate
	}
	if math.IsNaN(rate) || rate < 1 || rate > MaxRate {
		return nil, fmt.Errorf("socket fill: a rate of %v Hz is out of range 1…%d", cfg.Rate, MaxRate)
	}
	mode := cfg.Mode
	if mode > ModeExact {
		return nil, fmt.Errorf("socket fill: unknown mode %v", cfg.Mode)
	}
	if cfg.RecvEvery < 0 {
		return nil, fmt.Errorf("socket fill: receivers every %d ticks is not a count", cfg.RecvEvery)
	}
	return &Sampler{
		groups:   map[string][]FD{},
		windows:  map[string]*window{},
		interval: time.Duration(float64(time.Second) / rate),
		mode:     mode,
		done:     make(chan struct{}),
		loop:     newLoopState(p, max(cfg.RecvEvery, 1)),
	}, nil
}

// start runs the sampling goroutine until ctx ends or Stop.
func (s *Sampler) start(ctx context.Context) {
	ctx, s.stop = context.WithCancel(ctx)
	go s.run(ctx)
}

// Set makes senders the sockets of group, replacing what it had. Sockets
// already sampled keep their history; a group that did not exist starts
// an empty window. A changed set also looks again for the sockets that
// were gone; setting the same sockets again changes nothing, so a caller
// may call Set on every poll. Each socket is read by netlink (sock_diag);
// SetHeld reads sockets whose holder is known more cheaply.
func (s *Sampler) Set(group string, senders []Inode) {
	fds := make([]FD, len(senders))
	for i, ino := range senders {
		fds[i] = FD{Inode: ino}
	}
	s.SetHeld(group, fds)
}

// SetHeld is Set with a holder for each sender: the process and the
// descriptor through which it holds the socket. Such a socket is read
// with one getsockopt(SO_MEMINFO) on a duplicate of that descriptor
// (pidfd_getfd), taken for the call and closed at once, which costs about
// a fifth of a netlink lookup and does not grow with the sockets of the
// network namespace. The figures are the same SK_MEMINFO array sock_diag
// reports. A sender whose holder is not known (PID 0), or whose
// descriptor cannot be duplicated (another user's process, a Yama ptrace
// scope, a kernel before 5.6), is read by netlink, as with Set; one that
// no longer holds the socket is read by netlink until the set changes.
func (s *Sampler) SetHeld(group string, senders []FD) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.windows[group] == nil {
		s.windows[group] = &window{}
	}
	set := slices.Clone(senders)
	slices.SortFunc(set, func(a, b FD) int { return cmp.Compare(a.Inode, b.Inode) })
	set = slices.CompactFunc(set, func(a, b FD) bool { return a.Inode == b.Inode })
	if old, ok := s.groups[group]; ok && slices.Equal(old, set) {
		return // a caller that sets the same sockets every poll loses no tick
	}
	s.groups[group] = set
	s.version++
}

// Remove drops group and its window.
func (s *Sampler) Remove(group string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.groups, group)
	delete(s.windows, group)
	s.version++
}

// Take returns group's window since the last Take (or Set) and starts a
// new one. An unknown group gives an empty Fill.
func (s *Sampler) Take(group string) Fill {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[group]
	if w == nil {
		return Fill{}
	}
	f := w.fill()
	*w = window{}
	return f
}

// Stop ends the sampling and waits for its goroutine, which closes its
// netlink socket. It may be called more than once.
func (s *Sampler) Stop() {
	s.stop()
	<-s.done
}

// Done is closed when the sampling goroutine has ended.
func (s *Sampler) Done() <-chan struct{} { return s.done }

// run ticks until ctx ends or Stop, sleeping on the runtime's timer
// (time.Sleep) until each tick's time. It slept in clock_nanosleep on an
// OS thread of its own before, which alone was cheaper (BenchmarkSampler's
// floor, 0.95% of a core against 1.2%), but in a process with anything
// else to run that thread was a goroutine in a system call for 5 ms at a
// time, which Go's monitor thread kept waking every 20 µs to take its
// processor back: in `nbdscope run` the sampler cost 8% of a core that
// way and 5% on the timer, in an exec sweep 9% against 7% (the
// controller's CPU over 5 s, and over whole sweeps; bench/README). A tick
// that comes late is not made up for: the next one is an interval after
// it.
func (s *Sampler) run(ctx context.Context) {
	defer close(s.done)
	defer s.loop.p.Close()
	next := time.Now()
	for {
		next = next.Add(s.interval)
		if now := time.Now(); next.Before(now) {
			next = now.Add(s.interval)
		}
		for !sleepUntil(ctx, next) {
		}
		if ctx.Err() != nil {
			return
		}
		s.tick()
	}
}

// maxSleep bounds one sleep, so that Stop is seen within it at any rate.
const maxSleep = 50 * time.Millisecond

// sleepUntil sleeps until t, or for maxSleep, whichever comes first, and
// says whether t has come (or ctx ended).
func sleepUntil(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return true
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	time.Sleep(min(d, maxSleep))
	return ctx.Err() != nil || !time.Now().Before(t)
}

// tick takes one sample of every sender: it reads the sets as they are
// now, does the lookups without holding the lock, and adds the results to
// the windows of the groups the sets were read from.
func (s *Sampler) tick() {
	s.mu.Lock()
	if s.version != s.loop.version {
		s.loop.reconcile(s.groups)
		s.loop.version = s.version
	}
	s.mu.Unlock()

	err := s.loop.observe(s.mode)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version != s.loop.version {
		return // the sets changed meanwhile: the next tick uses the new ones
	}
	for group, senders := range s.groups {
		if w := s.windows[group]; w != nil {
			s.loop.account(w, senders, err)
		}
	}
}

// errNoMemInfo is a reply without SK_MEMINFO, which a kernel before 3.6
// (unix) or 3.3 (inet) would send.
var errNoMemInfo = errors.New("the kernel's reply has no SK_MEMINFO (Linux 3.6 or later needed)")
