//go:build !race

// The race detector slows the reader and the writer unevenly, and the two
// measures of fill drift apart under it (13.6 points of empty at 2 MiB in
// a CI run): .ci/run runs this package once more without -race for it.

package syscount_test

import (
	"context"
	"errors"
	"fmt"
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

// TestKernelFillAgrees: a writer sending 2 MiB at a time on a unix
// socketpair to a reader reading 256 KiB at a time, at a send buffer of
// 8 KiB and of 2 MiB, measured four ways over the same span: by the
// timer's programs (OpenFillMeter, the default), by the exact programs at
// every change (OpenFillEvents, time-weighted), by a second timer of
// every CPU at 10 kHz (syscount.FillReference), and by the sampler (at
// 1 kHz, 2000 samples). The timer's full % and empty % are within
// fillAgreePoints of the exact programs' and of the reference's at both
// sizes, and the exact programs' within it of the reference's. The
// sampler is logged, not held to a bound: it reads from a thread that
// must get a core the writer and the reader share, and its empty % at
// 8 KiB was up to 28 points over the reference's (bench/README,
// "Send-buffer fill in the kernel").
func TestKernelFillAgrees(t *testing.T) {
	k, err := syscount.OpenFillMeter()
	if err != nil {
		t.Skipf("the fill timer cannot load here: %v", err)
	}
	defer k.Close()
	e, err := syscount.OpenFillEvents()
	if err != nil {
		t.Skipf("the exact fill programs cannot load here: %v", err)
	}
	defer e.Close()
	for _, sndbuf := range []int{8 << 10, 2 << 20} {
		var off []string
		for try := 1; try <= fillAgreeTries; try++ {
			f := steadyFill(t, k, e, sndbuf)
			t.Logf("sndbuf %d, span %d: timer full %.1f%% empty %.1f%% mean %.0f B of %d (%d samples, %.2f s); events full %.1f%% empty %.1f%% mean %.0f B (%d changes, %.2f s); reference full %.1f%% empty %.1f%% mean %.0f B (%d samples); sampler full %.1f%% empty %.1f%% mean %.0f B of %d (%d samples)",
				sndbuf, try, f.k.FullPct, f.k.EmptyPct, f.k.MeanBytes, f.k.Limit, f.k.Samples, f.k.Seconds, f.e.FullPct, f.e.EmptyPct, f.e.MeanBytes, f.e.Events, f.e.Seconds,
				f.r.FullPct, f.r.EmptyPct, f.r.MeanBytes, f.r.Samples, f.s.FullPct, f.s.EmptyPct, f.s.MeanBytes, f.s.Limit, f.s.Samples)
			if !f.k.OK() || !f.e.OK() || !f.s.OK() {
				t.Fatalf("sndbuf %d: nothing measured (timer %+v, events %+v, sampler %+v)", sndbuf, f.k, f.e, f.s)
			}
			if f.k.Limit != f.s.Limit || f.e.Limit != f.s.Limit {
				t.Fatalf("sndbuf %d: limit %d by the timer, %d by the exact programs, %d sampled", sndbuf, f.k.Limit, f.e.Limit, f.s.Limit)
			}
			off = disagreements(sndbuf, f)
			if len(off) == 0 {
				break
			}
		}
		for _, o := range off {
			t.Error(o)
		}
	}
}

// disagreements are the pairs of measures whose full % or empty % are
// more than fillAgreePoints apart over one span.
func disagreements(sndbuf int, f fillMeasures) []string {
	var off []string
	pair := func(a, b string, aFull, aEmpty, bFull, bEmpty float64) {
		if d := math.Abs(aFull - bFull); d > fillAgreePoints {
			off = append(off, fmt.Sprintf("sndbuf %d: full %.1f%% by %s, %.1f%% by %s: %.1f points apart (at most %d)", sndbuf, aFull, a, bFull, b, d, fillAgreePoints))
		}
		if d := math.Abs(aEmpty - bEmpty); d > fillAgreePoints {
			off = append(off, fmt.Sprintf("sndbuf %d: empty %.1f%% by %s, %.1f%% by %s: %.1f points apart (at most %d)", sndbuf, aEmpty, a, bEmpty, b, d, fillAgreePoints))
		}
	}
	pair("the timer", "the exact programs", f.k.FullPct, f.k.EmptyPct, f.e.FullPct, f.e.EmptyPct)
	pair("the timer", "the reference", f.k.FullPct, f.k.EmptyPct, f.r.FullPct, f.r.EmptyPct)
	pair("the exact programs", "the reference", f.e.FullPct, f.e.EmptyPct, f.r.FullPct, f.r.EmptyPct)
	return off
}

// fillAgreeTries is how many spans a size is measured over until one has
// every measure agree. Beside other packages' tests (CI's race-free pass
// runs several at once), the pair at 8 KiB is pushed around by them and
// each measure, a sample at each of its own interrupts, read up to 11
// points off the others in a span in three of eight runs here (the
// reference once 19 points off both kernel measures): a span disturbed
// like that tells nothing about the instruments. A measure that is wrong
// (a missed socket, a misdated charge, a tick that reads another slot)
// is off in every span.
const fillAgreeTries = 3

// fillAgreePoints is how far apart two measures may be: the timers'
// samples (2000 a second, and the reference's 20,000) leave about ±1 and
// ±0.3 points, and each interrupt moves the pair a little; the rest is
// the exact programs' dating of each charge, an estimate
// (fillprog_linux.go). At 2 MiB the exact programs and the reference were
// within 0.5 points in every run here; at 8 KiB the exact programs' full
// % 1.0 to 5.6 over the reference's and their empty % 3.7 under to 0.2
// over, in runs alone and beside other packages' tests.
const fillAgreePoints = 8

// fillMeasures are one span's four measures.
type fillMeasures struct {
	k, e syscount.FillWindow
	s    sockdiag.Fill
	r    syscount.FillRefWindow
}

// steadyFill runs the pair until the sampler has 2000 samples of it (at
// most 20 s) and returns the four measures over the same span.
func steadyFill(t *testing.T, k, e *syscount.FillMeter, sndbuf int) fillMeasures {
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
	for _, m := range []*syscount.FillMeter{k, e} {
		if err := m.Set("w", []uint64{st.Ino}); err != nil {
			t.Fatal(err)
		}
		defer m.Set("w", nil)
	}
	stop := runPair(pair)
	defer stop()
	time.Sleep(100 * time.Millisecond) // past the start
	k.Take("w")
	e.Take("w")
	smp.Take("w")
	if err := ref.Reset(); err != nil {
		t.Fatal(err)
	}
	var f fillMeasures
	for deadline := time.Now().Add(20 * time.Second); f.s.Samples < 2000 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		f.s = addFill(f.s, smp.Take("w"))
	}
	f.k, f.e = k.Take("w"), e.Take("w")
	if f.r, err = ref.Take(); err != nil {
		t.Fatal(err)
	}
	return f
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
