package syscount

import (
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// FillTimerCost is what the timer's fill programs cost here, from the
// kernel's own accounting of their runs (BPF_ENABLE_STATS, Linux 5.8+):
// the programs' time, not the timer interrupt's entry and exit around
// the tick's.
type FillTimerCost struct {
	// Sockets is how many watched sockets each tick read.
	Sockets int
	// TickNs is the tick program's CPU time a run, over Ticks runs.
	TickNs float64
	Ticks  uint64
	// TicksPerSecond is how many ticks the machine takes a second while
	// a socket is watched, over all CPUs.
	TicksPerSecond float64
	// FindNs is the find program's CPU time a run, over Finds runs: one
	// at the end of every send call on the machine (here a 1-byte write
	// on a watched socket, and one on another, in turn), while it is on.
	// FindAtSends says whether it is on once the sockets are watched: off
	// where the iterator found every one, when no send call pays for it.
	FindNs      float64
	Finds       uint64
	FindAtSends bool
	// FoundBy is how a watched socket is found (FoundByIterator, or
	// FoundBySend with NotByIterator saying why not the iterator).
	FoundBy, NotByIterator string
	// IterNs is the iterator's CPU time for one run, finding the
	// watched sockets among IterVisits: the program's runs, one a unix
	// socket of the network namespace and one at the end.
	IterNs     float64
	IterVisits uint64
}

// MeasureFillTimer watches sockets socketpairs' senders, each holding
// 1000 bytes (the first, read by the loop, a byte or none), for d, with a 1-byte write and read loop on one watched
// and one other socketpair, and says what the programs cost.
func MeasureFillTimer(sockets int, d time.Duration) (FillTimerCost, error) {
	c := FillTimerCost{Sockets: sockets, TicksPerSecond: 1e9 / fillTickNS}
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return c, fmt.Errorf("the kernel's accounting of BPF programs' time (BPF_ENABLE_STATS, Linux 5.8+): %w", err)
	}
	defer stats.Close()
	m, err := OpenFillMeter()
	if err != nil {
		return c, err
	}
	defer m.Close()
	pairs, inodes, err := costPairs(sockets + 1)
	defer func() {
		for _, p := range pairs {
			unix.Close(p[0])
			unix.Close(p[1])
		}
	}()
	if err != nil {
		return c, err
	}
	t := m.back.(*fillTimer)
	c.FoundBy, c.NotByIterator = t.foundBy()
	it0, err := t.iterStats()
	if err != nil {
		return c, err
	}
	if err := m.Set("cost", inodes[:sockets]); err != nil {
		return c, err
	}
	if it1, err := t.iterStats(); err == nil && it1.RunCount > it0.RunCount {
		c.IterNs, c.IterVisits = float64((it1.Runtime - it0.Runtime).Nanoseconds()), it1.RunCount-it0.RunCount
	}
	c.FindAtSends = t.finding()
	if err := t.setFind(true); err != nil { // timed even where it is off
		return c, err
	}
	for _, p := range pairs[:sockets] {
		unix.Write(p[0], make([]byte, 1000))
	}
	tick0, find0, err := t.stats()
	if err != nil {
		return c, err
	}
	one, in := make([]byte, 1), make([]byte, 4096)
	for end, i := time.Now().Add(d), 0; time.Now().Before(end); i++ {
		p := pairs[sockets*(i%2)] // a watched sender, then the other
		unix.Write(p[0], one)
		unix.Read(p[1], in) // all there is: the watched one's 1000 bytes the first time
	}
	tick1, find1, err := t.stats()
	if err != nil {
		return c, err
	}
	c.Ticks, c.Finds = tick1.RunCount-tick0.RunCount, find1.RunCount-find0.RunCount
	if c.Ticks > 0 {
		c.TickNs = float64((tick1.Runtime - tick0.Runtime).Nanoseconds()) / float64(c.Ticks)
	}
	if c.Finds > 0 {
		c.FindNs = float64((find1.Runtime - find0.Runtime).Nanoseconds()) / float64(c.Finds)
	}
	return c, nil
}

// costPairs makes n socketpairs and gives their senders' inodes.
func costPairs(n int) ([][2]int, []uint64, error) {
	var pairs [][2]int
	var inodes []uint64
	for range n {
		p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return pairs, nil, fmt.Errorf("a socketpair to watch: %w", err)
		}
		pairs = append(pairs, p)
		var st unix.Stat_t
		if err := unix.Fstat(p[0], &st); err != nil {
			return pairs, nil, err
		}
		inodes = append(inodes, st.Ino)
	}
	return pairs, inodes, nil
}

// stats are the tick and find programs' run counts and times so far.
func (t *fillTimer) stats() (tick, find *ebpf.ProgramStats, err error) {
	if len(t.timers) == 0 || len(t.find) == 0 {
		return nil, nil, fmt.Errorf("the fill timer's programs are not loaded")
	}
	if tick, err = t.timers[0].prog.Stats(); err != nil {
		return nil, nil, err
	}
	find, err = t.find[0].prog.Stats()
	return tick, find, err
}

// iterStats are the iterator program's run count and time so far (none
// without an iterator).
func (t *fillTimer) iterStats() (*ebpf.ProgramStats, error) {
	if t.iterProg == nil {
		return &ebpf.ProgramStats{}, nil
	}
	return t.iterProg.Stats()
}
