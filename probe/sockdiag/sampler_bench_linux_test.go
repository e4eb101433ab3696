//go:build linux

package sockdiag

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkSampler measures what the sampler costs: 8 connections per side
// (two groups, 16 sender sockets, their 16 receivers looked up too) at
// 200 Hz for 2 s, with the process's CPU time (getrusage, user + system)
// over that stretch as a share of one core. The figure includes the idle
// process around the sampler (garbage collector, timers), so it is an
// upper bound. floor-%/core is the same sampler with no sockets, measured
// in turn with it: the cost of waking 200 times a second, which the
// lookups add to. Each is the median of benchRounds stretches; min and
// max are the sampling's. "background" adds idle unix sockets to the namespace, which a
// dump must walk and an exact lookup scans. "held" gives the sampler each
// sender's holder (SetHeld), as the engine does for the processes it
// started: one getsockopt on a momentary duplicate a socket, whatever the
// namespace holds.
func BenchmarkSampler(b *testing.B) {
	for _, c := range []struct {
		family     string
		mode       Mode
		background int
		recvEvery  int
		held       bool
	}{
		{"unix", ModeAuto, 0, 1, true}, {"unix", ModeAuto, 1000, 1, true}, {"tcp", ModeAuto, 0, 1, true},
		{"unix", ModeAuto, 0, 1, false}, {"unix", ModeDump, 0, 1, false}, {"unix", ModeExact, 0, 1, false},
		{"unix", ModeAuto, 1000, 1, false}, {"unix", ModeDump, 1000, 1, false}, {"unix", ModeExact, 1000, 1, false},
		{"tcp", ModeAuto, 0, 1, false}, {"tcp", ModeDump, 0, 1, false}, {"tcp", ModeAuto, 0, 10, false},
	} {
		name := fmt.Sprintf("%s/%v/background=%d/recv-every=%d", c.family, c.mode, c.background, c.recvEvery)
		if c.held {
			name = fmt.Sprintf("%s/held/background=%d", c.family, c.background)
		}
		b.Run(name, func(b *testing.B) {
			for range c.background / 2 {
				newSocketPair(b)
			}
			groups := benchConnections(b, c.family, c.held)
			for b.Loop() {
				benchRun(b, SamplerConfig{Rate: DefaultRate, Mode: c.mode, RecvEvery: c.recvEvery}, groups)
			}
		})
	}
}

// benchConnections opens 8 connections for each of two groups, each with
// some data waiting at its receiver, and returns the senders, with this
// process as their holder when held.
func benchConnections(b *testing.B, family string, held bool) [2][]FD {
	var groups [2][]FD
	for g := range groups {
		for range 8 {
			if family == "unix" {
				p := newSocketPair(b)
				if _, err := unix.Write(p.fd[0], make([]byte, 64<<10)); err != nil {
					b.Fatal(err)
				}
				groups[g] = append(groups[g], p.holder(0, held))
				continue
			}
			_, server := tcpPair(b, "tcp4", "127.0.0.1:0")
			if _, err := server.Write(make([]byte, 64<<10)); err != nil {
				b.Fatal(err)
			}
			groups[g] = append(groups[g], tcpHolder(b, server, held))
		}
	}
	return groups
}

// tcpHolder is the connection's socket as this process holds it (a
// descriptor of its own, closed with the benchmark).
func tcpHolder(b *testing.B, c *net.TCPConn, held bool) FD {
	ino := tcpInode(b, c)
	if !held {
		return FD{Inode: ino}
	}
	f, err := c.File()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return FD{PID: os.Getpid(), FD: int(f.Fd()), Inode: ino}
}

const benchStretch = 2 * time.Second

// benchRounds is how many times the floor and the sampling are measured,
// in turn, for the medians reported: one 2 s stretch on this VM varies by
// half a percent of a core from one to the next.
const benchRounds = 3

func benchRun(b *testing.B, cfg SamplerConfig, groups [2][]FD) {
	var floors, totals []stretchCost
	for range benchRounds {
		floors = append(floors, benchStretchCPU(b, cfg, [2][]FD{}))
		totals = append(totals, benchStretchCPU(b, cfg, groups))
	}
	byPct := func(a, b stretchCost) int { return cmp.Compare(a.pct, b.pct) }
	slices.SortFunc(floors, byPct)
	slices.SortFunc(totals, byPct)
	floor, total := floors[benchRounds/2], totals[benchRounds/2]
	b.ReportMetric(total.pct, "cpu-%/core")
	b.ReportMetric(totals[0].pct, "min-%/core")
	b.ReportMetric(totals[benchRounds-1].pct, "max-%/core")
	b.ReportMetric(floor.pct, "floor-%/core")
	b.ReportMetric(total.ticksPerS, "ticks/s")
	b.ReportMetric(total.usPerTick, "cpu-µs/tick")
}

type stretchCost struct {
	pct, ticksPerS, usPerTick float64
}

// benchStretchCPU samples groups for benchStretch and measures the
// process's CPU time meanwhile. With no sockets it measures the floor:
// the 200 Hz wake-ups alone, which any sampler pays.
func benchStretchCPU(b *testing.B, cfg SamplerConfig, groups [2][]FD) stretchCost {
	s, err := StartSampler(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	s.SetHeld("A", groups[0])
	s.SetHeld("B", groups[1])
	time.Sleep(100 * time.Millisecond) // sockets resolved, buffers warm
	s.Take("A")
	s.Take("B")

	before, start := rusage(b), time.Now()
	time.Sleep(benchStretch)
	after, wall := rusage(b), time.Since(start)
	fa, fb := s.Take("A"), s.Take("B")

	cpu := after - before
	if fa.Errors+fb.Errors != 0 || fa.Samples != fa.Ticks*len(groups[0]) || fb.Samples != fb.Ticks*len(groups[1]) {
		b.Fatalf("windows A %+v, B %+v: every tick should sample every socket", fa, fb)
	}
	return stretchCost{
		pct:       100 * cpu.Seconds() / wall.Seconds(),
		ticksPerS: float64(fa.Ticks) / wall.Seconds(),
		usPerTick: float64(cpu.Microseconds()) / float64(max(fa.Ticks, 1)),
	}
}

func rusage(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
