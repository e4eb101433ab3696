package sockdiag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// DefaultRate is the sampler's rate when none is given, the 200 Hz of
// issue 24: 2 s of a gauge hold 400 samples per socket. What it costs is
// measured by BenchmarkSampler (see the package documentation).
const DefaultRate = 200

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
	switch m {
	case ModeAuto:
		return "auto"
	case ModeDump:
		return "dump"
	case ModeExact:
		return "exact"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
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
	Close() error
}

// Sampler samples the send-buffer fill of groups of sender sockets (one
// group per side, say) from a goroutine of its own, until its context ends
// or Stop is called. Set changes a group's sockets while it runs; Take
// returns a group's window and starts a new one.
type Sampler struct {
	mu      sync.Mutex
	groups  map[string][]Inode
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
		groups:   map[string][]Inode{},
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
// may call Set on every poll.
func (s *Sampler) Set(group string, senders []Inode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.windows[group] == nil {
		s.windows[group] = &window{}
	}
	set := slices.Compact(slices.Sorted(slices.Values(senders)))
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

func (s *Sampler) run(ctx context.Context) {
	defer close(s.done)
	defer s.loop.p.Close()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.tick()
		}
	}
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
