//go:build !race

// The race detector slows the reader and the writer unevenly, and the two
// measures of fill drift apart under it (13.6 points of empty at 2 MiB in
// a CI run): .ci/run runs this package once more without -race for it.

package syscount_test

import (
	"context"
	"errors"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/probe/sockdiag"
	"nbdscope/probe/syscount"
)

// TestFillAgreesWithSampler: a writer sending 2 MiB at a time on a unix
// socketpair to a reader reading 256 KiB at a time, at a send buffer of
// 8 KiB and of 2 MiB: the kernel's time-weighted fill and the sampler's
// (at 1 kHz, 2000 samples) agree within a few points of full% and empty%
// at 2 MiB (up to 6 points apart in runs here, on a loaded machine). At
// 8 KiB the kernel's full% is low by the time each skb is charged before
// it is queued (fillprog_linux.go): 3.5 to 13 points in runs here, and
// its empty% up to 9 points off; the test bounds that, so that a change
// which makes it worse fails (read at the send calls alone, full% was 52
// points low).
func TestFillAgreesWithSampler(t *testing.T) {
	m, err := syscount.OpenFillMeter()
	if err != nil {
		t.Skipf("the fill programs cannot load here: %v", err)
	}
	defer m.Close()
	// empty% gets 12 points at both sizes: under the race detector the
	// reader's pace moves, and at 2 MiB it drifted 8.0 points in a CI run
	// (55.1% against 63.2%), where 8 was the bound.
	for _, c := range []struct{ sndbuf, fullLow, empty int }{{8 << 10, 20, 12}, {2 << 20, fillAgreePoints, 12}} {
		sndbuf := c.sndbuf
		k, s := steadyFill(t, m, sndbuf)
		t.Logf("sndbuf %d: kernel full %.1f%% empty %.1f%% mean %.0f B of %d (%d calls, %.2f s); sampler full %.1f%% empty %.1f%% mean %.0f B of %d (%d samples)",
			sndbuf, k.FullPct, k.EmptyPct, k.MeanBytes, k.Limit, k.Events, k.Seconds, s.FullPct, s.EmptyPct, s.MeanBytes, s.Limit, s.Samples)
		if !k.OK() || !s.OK() {
			t.Fatalf("sndbuf %d: nothing measured (kernel %+v, sampler %+v)", sndbuf, k, s)
		}
		if d := s.FullPct - k.FullPct; d > float64(c.fullLow) || d < -fillAgreePoints {
			t.Errorf("sndbuf %d: full %.1f%% in the kernel, %.1f%% sampled: %.1f points apart", sndbuf, k.FullPct, s.FullPct, d)
		}
		if d := math.Abs(k.EmptyPct - s.EmptyPct); d > float64(c.empty) {
			t.Errorf("sndbuf %d: empty %.1f%% in the kernel, %.1f%% sampled: %.1f points apart", sndbuf, k.EmptyPct, s.EmptyPct, d)
		}
		if k.Limit != s.Limit {
			t.Errorf("sndbuf %d: limit %d in the kernel, %d sampled", sndbuf, k.Limit, s.Limit)
		}
	}
}

// fillAgreePoints is how far apart the two may be: the sampler's 2000
// samples alone leave about ±2 points at 50%, and a loaded machine moves
// when it reads.
const fillAgreePoints = 8

// steadyFill runs the pair until the sampler has 2000 samples of it (at
// most 20 s) and returns both windows over the same span.
func steadyFill(t *testing.T, m *syscount.FillMeter, sndbuf int) (syscount.FillWindow, sockdiag.Fill) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[1])
	if err := unix.SetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF, sndbuf); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(pair[0], &st); err != nil {
		t.Fatal(err)
	}
	// Enough Ps that the writer and the reader, back from a blocking
	// call, never wait for the sampler's: with GOMAXPROCS at the 2 cores,
	// the Go scheduler tied the pair's pace to the sampler's wake-ups,
	// and the sampler's empty % moved 41-63% between runs where the
	// kernel's stayed 47-48%.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	smp, err := sockdiag.StartSampler(ctx, sockdiag.SamplerConfig{Rate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer smp.Stop()
	smp.SetHeld("w", []sockdiag.FD{{PID: os.Getpid(), FD: pair[0], Inode: sockdiag.Inode(st.Ino)}})
	if err := m.Set("w", []uint64{st.Ino}); err != nil {
		t.Fatal(err)
	}
	defer m.Set("w", nil)
	stop := runPair(pair)
	defer stop()
	time.Sleep(100 * time.Millisecond) // past the start
	m.Take("w")
	smp.Take("w")
	var s sockdiag.Fill
	for deadline := time.Now().Add(20 * time.Second); s.Samples < 2000 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		s = addFill(s, smp.Take("w"))
	}
	k := m.Take("w")
	return k, s
}

// runPair writes 2 MiB at a time into pair[0] and reads 256 KiB at a
// time from pair[1] until stop, which closes pair[0].
func runPair(pair [2]int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2<<20)
		for !done.Load() {
			if _, err := unix.Write(pair[0], buf); err != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 256<<10)
		for {
			n, err := unix.Read(pair[1], buf)
			if n <= 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
				return
			}
		}
	}()
	return func() {
		done.Store(true)
		unix.Shutdown(pair[0], unix.SHUT_WR)
		wg.Wait()
		unix.Close(pair[0])
	}
}

// addFill adds two sampler windows, weighted by their samples.
func addFill(a, b sockdiag.Fill) sockdiag.Fill {
	n := a.Samples + b.Samples
	if n == 0 {
		return a
	}
	w := func(x, y float64) float64 { return (x*float64(a.Samples) + y*float64(b.Samples)) / float64(n) }
	return sockdiag.Fill{Samples: n, FullPct: w(a.FullPct, b.FullPct), EmptyPct: w(a.EmptyPct, b.EmptyPct),
		MeanBytes: w(a.MeanBytes, b.MeanBytes), Limit: max(a.Limit, b.Limit)}
}
