package engine

import (
	"slices"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/probe/sockdiag"
)

// TestLookOnlyWhenConnectionsChange: while the side's children say no
// connection came or went, its connections are not looked for again
// (no /proc scan: there were two at every poll of each side, 40 a
// second here), and a change is found at the poll that reports it: the
// load's connections re-opened (the reader changed: as many as before,
// each a new socket), then a third one opened.
func TestLookOnlyWhenConnectionsChange(t *testing.T) {
	cfg := testConfig()
	cfg.Sides[0].Connections = 2
	p := startPair(t, cfg)
	first := waitSenders(t, p, 2, 2, nil)

	scans0 := procScans.Load()
	samples := countSamples(t, p, 20)
	// Scanned at every poll, the 20 samples read /proc 40 times. Quiet,
	// none or one or two; under the whole suite with -race a CI run read
	// 6 (a look made while a connection was still settling is not kept,
	// and is made again): at most one scan in two samples.
	if scans := procScans.Load() - scans0; scans > int64(samples/2) {
		t.Errorf("%d /proc scans in %d samples with no connection changed, want at most %d", scans, samples, samples/2)
	}

	reader := model.ReaderPoll
	if cur := cfg.Sides[0].Reader; cur == model.ReaderPoll || cur == "" && model.DefaultReader() == model.ReaderPoll {
		reader = model.ReaderNetpoller
	}
	ch, err := model.NewChange(0, model.SetReader, string(reader))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ch); err != nil {
		t.Fatal(err)
	}
	reopened := waitSenders(t, p, 2, 2, first)
	ch, err = model.NewChange(0, model.SetConnections, "3")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(ch); err != nil {
		t.Fatal(err)
	}
	waitSenders(t, p, 3, 1, reopened)
}

// waitSenders waits (at most 40 samples) until side A's kept look holds
// n senders, fresh of them not among old, and returns them.
func waitSenders(t *testing.T, p *Pair, n, fresh int, old []sockdiag.FD) []sockdiag.FD {
	t.Helper()
	var got []sockdiag.FD
	for range 40 {
		p.fill.mu.Lock()
		got = slices.Clone(p.fill.looks.bySide[p.sides[0].name].senders)
		p.fill.mu.Unlock()
		kept := 0
		for _, h := range got {
			if slices.ContainsFunc(old, func(o sockdiag.FD) bool { return o.Inode == h.Inode }) {
				kept++
			}
		}
		if len(got) == n && n-kept == fresh {
			return got
		}
		countSamples(t, p, 1)
	}
	t.Fatalf("side A's senders %v after 40 samples: want %d, %d of them new (old: %v)", got, n, fresh, old)
	return nil
}

// countSamples reads the pair's updates until n samples came (at most
// 20 s) and returns how many did.
func countSamples(t *testing.T, p *Pair, n int) int {
	t.Helper()
	deadline := time.After(20 * time.Second)
	got := 0
	for got < n {
		select {
		case u, ok := <-p.Updates():
			if !ok {
				t.Fatal("the pair ended")
			}
			if u.Sample != nil {
				got++
			}
		case <-deadline:
			t.Fatalf("%d samples in 20 s, want %d", got, n)
		}
	}
	return got
}
