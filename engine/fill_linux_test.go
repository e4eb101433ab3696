package engine

import (
	"testing"

	"nbdscope/model"
)

// TestSmallBufferFullMoreOften (issue 24): A's server at macOS's 8 KiB,
// B's at 2 MiB, reading 256 KiB requests two at a time. A request fills
// 8 KiB many times over and barely dents 2 MiB, so A's sender is full in
// more of its samples and empty in fewer. The shares are counts of
// samples, summed over whole samples; nothing is timed.
func TestSmallBufferFullMoreOften(t *testing.T) {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	p, a, b := runMacOSServerBesideBig(t, &cfg)
	t.Logf("A (%s): full %.1f%%, empty %.1f%%, %.0f bytes in flight of %d, %d fill samples; B (%s): full %.1f%%, empty %.1f%%, %.0f of %d, %d",
		cfg.Sides[0].SndBuf, a.fill.FullPct, a.fill.EmptyPct, a.fill.Bytes, a.fill.Limit, a.fill.Samples,
		cfg.Sides[1].SndBuf, b.fill.FullPct, b.fill.EmptyPct, b.fill.Bytes, b.fill.Limit, b.fill.Samples)
	if !a.fill.Known() || !b.fill.Known() {
		t.Fatalf("fill not measured: A %d samples, B %d", a.fill.Samples, b.fill.Samples)
	}
	if a.fill.FullPct <= b.fill.FullPct {
		t.Errorf("sndbuf_full_pct: A %.1f, B %.1f: want A > B", a.fill.FullPct, b.fill.FullPct)
	}
	if a.fill.EmptyPct >= b.fill.EmptyPct {
		t.Errorf("sndbuf_empty_pct: A %.1f, B %.1f: want A < B", a.fill.EmptyPct, b.fill.EmptyPct)
	}
	rep := p.Report()
	for _, s := range rep.Sides {
		if !s.Summary.Fill().Known() {
			t.Errorf("side %s's summary has no fill", s.Name)
		}
	}
}

// TestFillFindsOnlyDataSockets: the senders a side samples are its data
// connections: as many as the side has connections, not the listener or
// the control pipes.
func TestFillFindsOnlyDataSockets(t *testing.T) {
	cfg := testConfig()
	cfg.Sides[0].Connections = 3
	p := startPair(t, cfg)
	s := p.sides[0]
	srv, ld := s.children()
	snd, rcv, why := fillEnds(s.config(), model.FlowRead, srv, ld)
	if why != "" {
		t.Fatal(why)
	}
	if p.fill.smp == nil {
		t.Fatal(p.fill.err)
	}
	p.fill.mu.Lock()
	got, err := DataSenders(p.fill.conn, snd, rcv)
	p.fill.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d data sockets found for 3 connections: %v", len(got), got)
	}
	for _, h := range got {
		if h.PID != snd.PID || h.FD < 0 || h.Inode == 0 {
			t.Errorf("data socket %+v: want it held by the sender, PID %d, for the sampler to read through", h, snd.PID)
		}
	}
}
