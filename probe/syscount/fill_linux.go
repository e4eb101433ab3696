package syscount

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// FillMeter measures the send-buffer fill of groups of sender sockets in
// the kernel, where the sampler (probe/sockdiag) reads it from user space
// 100 times a second. Two ways, behind one bookkeeping of groups:
//   - the default (OpenFillMeter) reads every watched socket's level at a
//     timer's tick (filltimer_linux.go): what it costs does not grow with
//     the bytes moved;
//   - the exact one (OpenFillEvents) integrates the level at every change
//     (fillevents_linux.go): about 600 ns at every skb of a watched
//     socket.
//
// It is safe for concurrent use.
type FillMeter struct {
	mu   sync.Mutex
	back fillBackend
	// groups: per group, per sender inode, the sums read at the last
	// Take (the window's base).
	groups map[string]map[uint64]fillSums
}

// fillBackend is one way of measuring: it watches sockets by inode and
// says each one's sums so far.
type fillBackend interface {
	watch(ino uint64) error
	unwatch(ino uint64)
	// read is ino's sums at now (CLOCK_MONOTONIC ns) and its last level
	// read (bytes << 32 | limit); false when it is not watched.
	read(ino, now uint64) (fillSums, uint64, bool)
	close()
}

// fillSums are a socket's sums at one instant: time, bytes × time and
// the time full and empty in ns (the timer's samples each weigh the time
// between two), the changes integrated (events) and the samples taken.
type fillSums struct {
	total, bytes, full, empty, events, samples float64
}

func (s fillSums) minus(o fillSums) fillSums {
	return fillSums{s.total - o.total, s.bytes - o.bytes, s.full - o.full, s.empty - o.empty, s.events - o.events, s.samples - o.samples}
}

func addSums(a, b fillSums) fillSums {
	return fillSums{a.total + b.total, a.bytes + b.bytes, a.full + b.full, a.empty + b.empty, a.events + b.events, a.samples + b.samples}
}

// OpenFillMeter loads the timer's fill programs and starts them: the
// default way. An error says why they cannot run here (no BPF rights, no
// kernel BTF, no cpu-clock events, a refusal by the verifier, whose log
// VerifierLog gives); the sampler then measures.
func OpenFillMeter() (*FillMeter, error) {
	t, err := openFillTimer()
	if err != nil {
		return nil, err
	}
	return openMeter(t)
}

// openMeter is a meter on back, once its self-check passed.
func openMeter(back fillBackend) (*FillMeter, error) {
	m := &FillMeter{back: back, groups: map[string]map[uint64]fillSums{}}
	if err := m.selfCheck(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Close detaches the programs and frees the maps.
func (m *FillMeter) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.back != nil {
		m.back.close()
		m.back = nil
	}
}

// Set makes inodes (sender sockets) the group's; a socket new to it is
// measured from now on where the timer's iterator finds it (a unix
// socket of this network namespace, FoundBy), else from its next send
// call.
func (m *FillMeter) Set(group string, inodes []uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.back == nil {
		return nil
	}
	g := m.groups[group]
	if g == nil {
		g = map[uint64]fillSums{}
		m.groups[group] = g
	}
	want := map[uint64]bool{}
	var added []uint64
	var err error
	for _, ino := range inodes {
		want[ino] = true
		if _, ok := g[ino]; ok {
			continue
		}
		if !m.heldElsewhere(ino, group) {
			if e := m.back.watch(ino); e != nil {
				err = fmt.Errorf("watching socket inode %d: %w", ino, e)
				continue
			}
		}
		added = append(added, ino)
	}
	if e := m.findAdded(g, added); e != nil && err == nil {
		err = e
	}
	for ino := range g {
		if !want[ino] {
			delete(g, ino)
			if !m.heldElsewhere(ino, group) {
				m.back.unwatch(ino)
			}
		}
	}
	return err
}

// findAdded has the backend find the sockets just watched, where it can
// before their next send call, then takes each one's base: its sums so
// far. An error says a socket left unfound cannot be found at its send
// calls either.
func (m *FillMeter) findAdded(g map[uint64]fillSums, added []uint64) error {
	var err error
	if f, ok := m.back.(sockFinder); ok && len(added) > 0 {
		err = f.findWatched()
	}
	for _, ino := range added {
		g[ino] = fillSums{}
		if base, _, ok := m.back.read(ino, monotonicNS()); ok {
			g[ino] = base
		}
	}
	return err
}

// Watching is how many sockets the meter watches, over its groups.
func (m *FillMeter) Watching() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[uint64]bool{}
	for _, g := range m.groups {
		for ino := range g {
			seen[ino] = true
		}
	}
	return len(seen)
}

// FoundBy says how the meter finds a socket it is asked to watch, and
// for FoundBySend why not by the iterator: FoundByIterator, when it is
// watched, where the kernel has iter/unix (a unix socket of another
// network namespace still at its next send call), or FoundBySend, at
// its next send call. The exact programs (OpenFillEvents) measure from
// each socket's next send call.
func (m *FillMeter) FoundBy() (way, whyNotIterator string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.back.(*fillTimer); ok {
		return t.foundBy()
	}
	return FoundBySend, "the exact programs start at a socket's send call"
}

// heldElsewhere says another group than group watches ino.
func (m *FillMeter) heldElsewhere(ino uint64, group string) bool {
	for name, g := range m.groups {
		if _, ok := g[ino]; ok && name != group {
			return true
		}
	}
	return false
}

// Take is the group's fill since its last Take (or since each socket
// joined it).
func (m *FillMeter) Take(group string) FillWindow {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.back == nil {
		return FillWindow{}
	}
	now := monotonicNS()
	var w FillWindow
	var sum fillSums
	var last float64
	for ino, base := range m.groups[group] {
		cur, level, ok := m.back.read(ino, now)
		if !ok {
			continue
		}
		sum = addSums(sum, cur.minus(base))
		m.groups[group][ino] = cur
		w.Sockets++
		last += float64(level >> 32)
		w.Limit = max(w.Limit, int64(level&0xffffffff))
	}
	return w.from(sum, last)
}

// from fills w's figures from the window's sums and the summed last
// levels.
func (w FillWindow) from(s fillSums, last float64) FillWindow {
	w.Events, w.Samples = uint64(s.events), uint64(s.samples)
	if s.total <= 0 {
		return w
	}
	w.Seconds = s.total / 1e9
	w.FullPct, w.EmptyPct = 100*s.full/s.total, 100*s.empty/s.total
	w.MeanBytes = s.bytes / s.total
	if w.Sockets > 0 {
		w.LastBytes = last / float64(w.Sockets)
	}
	return w
}

func monotonicNS() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// selfCheckWait bounds how long the self-check waits for the level to
// be read: the timer's next tick, a few ms away.
const selfCheckWait = 500 * time.Millisecond

// selfCheck watches the sender of a socketpair with nothing read: the
// level the programs read must be what the kernel says of it (SIOCOUTQ,
// sk_wmem_alloc less one) and the limit SO_SNDBUF. It catches offsets
// that BTF gave but the programs read wrong, and a timer that never
// ticks.
func (m *FillMeter) selfCheck() error {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the fill program's self-check: %w", err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	var st unix.Stat_t
	if err := unix.Fstat(pair[0], &st); err != nil {
		return fmt.Errorf("the fill program's self-check: %w", err)
	}
	const group = "\x00self-check"
	defer func() { m.Set(group, nil); delete(m.groups, group) }()
	if err := m.Set(group, []uint64{st.Ino}); err != nil {
		return err
	}
	unix.Write(pair[0], make([]byte, 1000))
	outq, _ := unix.IoctlGetInt(pair[0], unix.TIOCOUTQ)
	sndbuf, _ := unix.GetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF)
	// Until the bytes are read: the timer can find the socket when it is
	// watched (fill timer's iterator) and tick before the write, reading
	// 0 of 212992 (a CI run).
	var level uint64
	for deadline := time.Now().Add(selfCheckWait); level>>32 == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		m.mu.Lock()
		_, level, _ = m.back.read(st.Ino, monotonicNS())
		m.mu.Unlock()
	}
	got := [2]int{int(level >> 32), int(level & 0xffffffff)}
	if level>>32 == 0 {
		return fmt.Errorf("the fill program read nothing of a socket in %v, where the kernel says %d bytes in flight against a limit of %d", selfCheckWait, outq, sndbuf)
	}
	if got != [2]int{outq, sndbuf} {
		return fmt.Errorf("the fill program read %d bytes in flight against a limit of %d, the kernel says %d and %d", got[0], got[1], outq, sndbuf)
	}
	return nil
}
