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
// 8 KiB and of 2 MiB, measured three ways over the same span: by the
// kernel's fill programs (time-weighted), by the sampler (at 1 kHz, 2000
// samples) and by a timer on every CPU reading the level in the kernel
// (syscount.FillReference, 10 kHz a CPU). The kernel's full % and empty %
// are within fillAgreePoints of the timer's at both sizes; read at the
// queue alone (before the charge was dated back), its full % at 8 KiB
// was 14 points below the sampler's. The sampler is held to a wider
// bound: it reads from a thread that must get a core the writer and the
// reader share, and its empty % at 8 KiB moved 41-63% between runs where
// the kernel's stayed 45-48%.
func TestFillAgreesWithSampler(t *testing.T) {
	m, err := syscount.OpenFillMeter()
	if err != nil {
		t.Skipf("the fill programs cannot load here: %v", err)
	}
	defer m.Close()
	for _, sndbuf := range []int{8 << 10, 2 << 20} {
		k, s, r := steadyFill(t, m, sndbuf)
		t.Logf("sndbuf %d: kernel full %.1f%% empty %.1f%% mean %.0f B of %d (%d calls, %.2f s); timer full %.1f%% empty %.1f%% mean %.0f B (%d samples); sampler full %.1f%% empty %.1f%% mean %.0f B of %d (%d samples)",
			sndbuf, k.FullPct, k.EmptyPct, k.MeanBytes, k.Limit, k.Events, k.Seconds, r.FullPct, r.EmptyPct, r.MeanBytes, r.Samples,
			s.FullPct, s.EmptyPct, s.MeanBytes, s.Limit, s.Samples)
		if !k.OK() || !s.OK() {
			t.Fatalf("sndbuf %d: nothing measured (kernel %+v, sampler %+v)", sndbuf, k, s)
		}
		for _, c := range []struct {
			what        string
			kern, other float64
			bound       float64
		}{
			{"full, the timer's", k.FullPct, r.FullPct, fillAgreePoints},
			{"empty, the timer's", k.EmptyPct, r.EmptyPct, fillAgreePoints},
			{"full, the sampler's", k.FullPct, s.FullPct, samplerAgreePoints},
			{"empty, the sampler's", k.EmptyPct, s.EmptyPct, samplerAgreePoints},
		} {
			if d := math.Abs(c.kern - c.other); d > c.bound {
				t.Errorf("sndbuf %d: %s %.1f%%, the kernel's %.1f%%: %.1f points apart (at most %.0f)", sndbuf, c.what, c.other, c.kern, d, c.bound)
			}
		}
		if k.Limit != s.Limit {
			t.Errorf("sndbuf %d: limit %d in the kernel, %d sampled", sndbuf, k.Limit, s.Limit)
		}
	}
}

// fillAgreePoints is how far apart the kernel's and the timer's may be:
// the timer's 40,000 samples leave about ±0.3 points, and each interrupt
// moves the pair a little. At 2 MiB they were within 1.1 points in every
// run here; at 8 KiB, where a charge the kernel dates back by the
// reader's copy rate is a third of each cycle, the kernel's full % was
// 3.3 below to 1.8 above in 12 runs and 6.2 below in a 13th, on the
// shared 2-core machine.
const fillAgreePoints = 7

// samplerAgreePoints is the sampler's bound (TestFillAgreesWithSampler
// says why it is wider).
const samplerAgreePoints = 25

// steadyFill runs the pair until the sampler has 2000 samples of it (at
// most 20 s) and returns the three windows over the same span.
func steadyFill(t *testing.T, m *syscount.FillMeter, sndbuf int) (syscount.FillWindow, sockdiag.Fill, syscount.FillRefWindow) {
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
	// call, never wait for the sampler's: with GOMAXPROCS at the 2 cores
	// the Go scheduler tied the pair's pace to the sampler's wake-ups.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	smp, err := sockdiag.StartSampler(ctx, sockdiag.SamplerConfig{Rate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer smp.Stop()
	ref, err := syscount.StartFillReference(st.Ino, 10000)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
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
	if err := ref.Reset(); err != nil {
		t.Fatal(err)
	}
	var s sockdiag.Fill
	for deadline := time.Now().Add(20 * time.Second); s.Samples < 2000 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		s = addFill(s, smp.Take("w"))
	}
	k := m.Take("w")
	r, err := ref.Take()
	if err != nil {
		t.Fatal(err)
	}
	return k, s, r
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
