package engine

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"nbdscope/model"
)

// Deep queues must never stall (issue 11.1): with 32 MiB × 8 and 2 MiB ×
// 128 requests in flight on 4 connections, read, write and mixed, against
// our server and against nbdkit memory, every interval in which a side's
// load ran shows progress, no request takes 5 s, and the sampler keeps
// reporting through alternate-mode turns (a stall would be a hole).
//
// Once, the client's reader sent the next READ itself and could wait for
// the send lock held by a WRITE blocked on a server that had stopped
// reading until that reader read its replies; and a pause that waited for
// 1 GiB in flight to drain held up the child's polls and the sampling loop.
func TestDeepQueuesNeverStall(t *testing.T) {
	shapes := []struct {
		name           string
		size, inFlight int
	}{
		{"32m-x8", 32 << 20, 8},
		{"2m-x128", 2 << 20, 128},
	}
	for _, target := range []string{"ours", "nbdkit"} {
		for _, sh := range shapes {
			t.Run(target+"/"+sh.name, func(t *testing.T) {
				cfg := stallConfig(sh.size, sh.inFlight)
				if target == "nbdkit" {
					// One nbdkit per side, as each side has its own
					// server of ours: a shared one would let one
					// side's queue hold up the other's requests.
					dir := t.TempDir()
					for i := range cfg.Sides {
						sock := filepath.Join(dir, fmt.Sprintf("k%d.sock", i))
						cfg.Sides[i].Target = startPeer(t, sock, "nbdkit", "-U", sock, "-f", "memory", "1G")
					}
				}
				checkNoStall(t, cfg)
			})
		}
	}
}

// stallConfig is a pair in alternate mode (the mode whose turns once froze
// the sampler) with A reading and B writing at the given depth.
func stallConfig(size, inFlight int) model.Config {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	cfg.Interval = model.Duration(400 * time.Millisecond)
	for i := range cfg.Sides {
		s := &cfg.Sides[i]
		s.Size = 1 << 30
		s.Backend = "null"
		s.Connections = 4
		s.RequestSize = size
		s.InFlight = inFlight
		s.Consume = model.ConsumeNone // the buffers of 1 GiB in flight are memory enough
	}
	cfg.Sides[0].Workload = model.WorkRead
	cfg.Sides[1].Workload = model.WorkWrite
	return cfg
}

// checkNoStall runs cfg for a turn of each side, then switches A to the
// mixed workload for another turn, and checks every sample.
func checkNoStall(t *testing.T, cfg model.Config) {
	p := startPair(t, cfg)
	interval := cfg.Interval.D()
	slice := max(4*interval, time.Second) // a turn (turns.slice)
	var samples []model.Sample
	// collect reads updates for at least d and then until done holds (the
	// sides of a slow machine need longer to show progress), at most
	// capWait.
	const capWait = 30 * time.Second
	collect := func(d time.Duration, done func() bool) {
		start := time.Now()
		deadline := time.After(capWait)
		for time.Since(start) < d || !done() {
			select {
			case u, ok := <-p.Updates():
				if !ok {
					t.Fatal("updates closed during the run")
				}
				if u.Crash != nil {
					t.Fatalf("crash: %s", u.Crash.Text())
				}
				if u.Sample != nil {
					samples = append(samples, *u.Sample)
				}
			case <-deadline:
				return
			}
		}
	}
	// moved: the side has at least n samples with its load running and
	// progress after the given time. A side's first turn starts once its
	// buffers are warm, which can take seconds (slot.warm), so the first
	// phase waits for two samples of each side rather than for a number
	// of turns. A warming sample can carry bytes too (the warm-up's last
	// requests); counted, it let the change below give A the turn when B
	// had run one sample of its own (a CI run).
	moved := func(side model.SideID, after float64, n int) bool {
		for _, s := range samples {
			if s.Side == side && s.Active && s.Bytes > 0 && s.T > after {
				n--
			}
		}
		return n <= 0
	}
	t0 := time.Now()
	collect(2*slice+interval, func() bool { return moved("A", 0, 2) && moved("B", 0, 2) })
	if err := applyText(p, 0, model.SetWorkload, string(model.WorkMixed)); err != nil {
		t.Fatal(err)
	}
	changed := time.Since(t0).Seconds()
	collect(slice+interval, func() bool { return moved("A", changed+interval.Seconds(), 1) })
	elapsed := time.Since(t0)

	// Every interval has a sample; a quarter leaves room for a slow
	// machine (the race detector, a shared CPU), while the stall this
	// guards against left 1 to 3 samples in 30 intervals.
	want := int(elapsed/interval) / 4
	rep := p.Report()
	for i, side := range []model.SideID{model.SideA, model.SideB} {
		sum := rep.Sides[i].Summary
		sc := cfg.Sides[i]
		if sum.Bytes == 0 || !sum.ThroughputBps.Known() || sum.ThroughputBps <= 0 {
			t.Errorf("%s moved nothing in %v", side, elapsed)
			continue
		}
		gap := stallGap(sc, float64(sum.ThroughputBps), interval)
		if gap > 2*interval {
			t.Logf("%s: %.0f MiB/s on this machine: a burst of replies takes %v; allowing gaps of %v",
				side, float64(sum.ThroughputBps)/(1<<20), time.Duration(float64(sc.Connections*sc.RequestSize)/float64(sum.ThroughputBps)*float64(time.Second)), gap)
		}
		if m := sum.LatencyMaxMs; !m.Known() {
			t.Errorf("%s: no request latency", side)
		}
		checkWaits(t, side, samples, sc)
		// The first completion may wait for a whole queue to be served.
		firstWait := max(5*time.Second, time.Duration(2*float64(sc.Connections*sc.InFlight*sc.RequestSize)/float64(sum.ThroughputBps)*float64(time.Second)))
		n, active, started := 0, 0, false
		var stuck time.Duration // active time without progress, so far
		for _, s := range samples {
			if s.Side != side {
				continue
			}
			n++
			if !s.Active {
				continue
			}
			active++
			if s.ErrorCount() != 0 {
				t.Errorf("%s at %.2fs: %d errors", side, s.T, s.ErrorCount())
			}
			if s.Bytes > 0 {
				started, stuck = true, 0
				continue
			}
			stuck += time.Duration(s.Seconds * float64(time.Second))
			// A deadlock never ends: past the gap, a stretch without
			// progress fails when no progress follows it, or when it lasts
			// four gaps, which no starved-but-live side did here (under
			// -race, every package's tests at once, the longest seen was
			// 1.2 gaps).
			if started && stuck > gap && (stuck > 4*gap || !progressAfter(samples, side, s.T)) {
				t.Errorf("%s at %.2fs: no progress for %v of load", side, s.T, stuck.Round(time.Millisecond))
			}
			if !started && stuck > firstWait {
				t.Errorf("%s at %.2fs: no request done after %v of load", side, s.T, stuck.Round(time.Millisecond))
			}
		}
		if n < want {
			t.Errorf("%s: %d samples in %v of %v intervals, want at least %d: the sampler stopped reporting", side, n, elapsed.Round(time.Millisecond), interval, want)
		}
		if active < 2 {
			t.Errorf("%s: %d samples with its load running, want at least 2", side, active)
		}
	}
	if t.Failed() {
		for _, s := range samples {
			t.Logf("%6.2fs %s active=%v bytes=%d max=%.0fms", s.T, s.Side, s.Active, s.Bytes, float64(s.LatencyMaxMs))
		}
	}
}

// progressAfter says the side completed something in a sample after t.
func progressAfter(samples []model.Sample, side model.SideID, t float64) bool {
	for _, s := range samples {
		if s.Side == side && s.T > t && s.Bytes > 0 {
			return true
		}
	}
	return false
}

// stallGap is the longest a running side may go without completing a
// request: more than two intervals, or, on a machine too slow for that, a
// multiple of what the side's own throughput makes inevitable. Replies of
// its connections come interleaved, so completions arrive in bursts of
// connections × request size. The stall this guards against is a
// deadlock: permanent, no progress in any interval after it. One empty
// interval is not one: under -race, with every package's tests running at
// once on a small, shared machine, the side can be starved of CPU for an
// interval (a 0.4 s interval that a late sampler stretches to 0.41 s and
// in which nothing completed). So a stall must span more than two
// intervals; a real one spans the rest of the run and fails either way.
func stallGap(sc model.SideConfig, bps float64, interval time.Duration) time.Duration {
	burst := time.Duration(float64(sc.Connections*sc.RequestSize) / bps * float64(time.Second))
	// Throughput swings on a shared machine: the average understates the
	// slow stretches.
	return max(2*interval, 4*burst)
}

// checkWaits holds every request to the 5 s, unless the wait is
// the queue's own length: a request that waited L while the side itself
// completed no more than twice what it keeps in flight waited its turn
// behind that queue (Little's law: 1 GiB in flight at 0.2 GiB/s is a 5 s
// wait however fair the server is). One that waited while more than that
// went past it was starved, which is the defect this guards against, and
// fails at any throughput.
func checkWaits(t *testing.T, side model.SideID, samples []model.Sample, sc model.SideConfig) {
	t.Helper()
	queue := uint64(sc.Connections * sc.InFlight * sc.RequestSize)
	for _, s := range samples {
		if s.Side != side || !s.LatencyMaxMs.Known() {
			continue
		}
		wait := time.Duration(float64(s.LatencyMaxMs) * float64(time.Millisecond))
		if wait <= 5*time.Second {
			continue
		}
		var passed uint64 // bytes the side completed while that request waited
		for _, o := range samples {
			if o.Side == side && o.T > s.T-wait.Seconds() && o.T <= s.T {
				passed += o.Bytes
			}
		}
		if passed > 2*queue+uint64(sc.Connections*sc.RequestSize) {
			t.Errorf("%s at %.2fs: a request waited %v while %d MiB of the side's own requests completed (%d MiB in flight): starved",
				side, s.T, wait.Round(time.Millisecond), passed>>20, queue>>20)
		} else {
			t.Logf("%s at %.2fs: a request waited %v behind its queue (%d MiB completed meanwhile, %d MiB in flight)", side, s.T, wait.Round(time.Millisecond), passed>>20, queue>>20)
		}
	}
}
