package engine

import (
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/units"
)

// Effect tests (issues 13 and 17): a smaller send buffer must show in the
// counts themselves. Every assertion is a ratio of counts per 2 MiB of
// payload, summed over whole samples; nothing is timed.

// tally sums a side's samples: payload and both processes' call counts.
type tally struct {
	bytes          uint64
	samples        int
	client, server nbd.IOStats
	fill           model.Fill // the send-buffer fill, weighted by samples
}

func (t *tally) add(s *model.Sample) {
	t.bytes += s.Bytes
	t.samples++
	t.fill = t.fill.Add(s.Fill())
	t.client = t.client.Add(s.Client.Counters().IO)
	if s.Server != nil {
		t.server = t.server.Add(s.Server.Counters().IO)
	}
}

// per2MiB is n per 2 MiB of the tally's payload.
func (t *tally) per2MiB(n uint64) float64 {
	return float64(n) / (float64(t.bytes) / model.PayloadUnit)
}

// enough: a few samples and at least 32 MiB, so one slow sample cannot
// decide a ratio.
func (t *tally) enough() bool { return t.samples >= 3 && t.bytes >= 32<<20 }

// bigBuf is the 2 MiB request the effect tests compare against. Where
// wmem_max is lower it raises it for the test (root) and else takes the
// largest request the kernel grants in full, saying so: a clamped buffer
// is never measured under the name "2m".
func bigBuf(t *testing.T) model.Buf {
	t.Helper()
	want := 2 << 20
	if have := wmemMax(); have < want {
		if err := raiseWmemMax(t, want); err != nil {
			t.Logf("net.core.wmem_max is %d and cannot be raised (%v): comparing against the largest request it grants, %s, instead of 2m", have, err, units.FormatSize(int64(have)))
			return model.Buf{Kind: model.BufSize, Bytes: have}
		}
	}
	return model.Buf{Kind: model.BufSize, Bytes: want}
}

// collect reads samples until want says every side it names has enough,
// giving each active sample whose settings did not change during it and
// match the side's stamp to its tally. Bounded by d.
func collect(t *testing.T, p *Pair, d time.Duration, tallies map[model.SideID]*tally, stamp func(side model.SideID, st model.Stamp) bool) {
	t.Helper()
	deadline := time.After(d)
	for {
		done := true
		for _, tl := range tallies {
			done = done && tl.enough()
		}
		if done {
			return
		}
		select {
		case u, ok := <-p.Updates():
			if !ok {
				t.Fatal("updates closed")
			}
			s := u.Sample
			if s == nil || !s.Active || s.Changed || s.Bytes == 0 || tallies[s.Side] == nil || !stamp(s.Side, s.Settings) {
				continue
			}
			tallies[s.Side].add(s)
		case <-deadline:
			for side, tl := range tallies {
				t.Logf("side %s: %d samples, %d MiB", side, tl.samples, tl.bytes>>20)
			}
			t.Fatalf("not enough load within %v", d)
		}
	}
}

// effectConfig is a qemu-img style read load (1 connection, 2 MiB
// requests, 8 in flight) on both sides, in turns so that each side has the
// machine's cores to itself while it is measured.
func effectConfig() model.Config {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	for i := range cfg.Sides {
		cfg.Sides[i].RequestSize = 2 << 20
		cfg.Sides[i].InFlight = 8
	}
	return cfg
}

// runMacOSServerBesideBig runs cfg with A's server send buffer at macOS's
// 8 KiB and B's at a large one (bigBuf, written into cfg), and tallies each
// side's samples taken at its own buffer.
func runMacOSServerBesideBig(t *testing.T, cfg *model.Config) (p *Pair, a, b *tally) {
	t.Helper()
	cfg.Sides[0].SndBuf = model.Buf{Kind: model.BufMacOS}
	cfg.Sides[1].SndBuf = bigBuf(t)
	p = startPair(t, *cfg)
	a, b = &tally{}, &tally{}
	collect(t, p, 60*time.Second, map[model.SideID]*tally{"A": a, "B": b}, func(side model.SideID, st model.Stamp) bool {
		return st.SndBuf == cfg.Sides[side.Index()].SndBuf.String()
	})
	return p, a, b
}

// TestSmallBufferMoreCalls: one run, A's server at macOS's 8 KiB and B's
// at 2 MiB. A's client needs at least 8× the receive calls per 2 MiB, and
// A's server hits a full buffer (send EAGAIN) more often per 2 MiB.
func TestSmallBufferMoreCalls(t *testing.T) {
	cfg := effectConfig()
	_, a, b := runMacOSServerBesideBig(t, &cfg)
	aRecv, bRecv := a.per2MiB(a.client.RecvCalls), b.per2MiB(b.client.RecvCalls)
	aEAG, bEAG := a.per2MiB(a.server.SendEAGAIN), b.per2MiB(b.server.SendEAGAIN)
	t.Logf("client receive calls per 2 MiB: A (%s) %.2f, B (%s) %.2f: %.1fx; server send EAGAIN per 2 MiB: A %.2f, B %.2f",
		cfg.Sides[0].SndBuf, aRecv, cfg.Sides[1].SndBuf, bRecv, aRecv/bRecv, aEAG, bEAG)
	if aRecv < 8*bRecv {
		t.Errorf("client receive calls per 2 MiB: A %.2f at %s, B %.2f at %s: want A ≥ 8× B", aRecv, cfg.Sides[0].SndBuf, bRecv, cfg.Sides[1].SndBuf)
	}
	if aEAG <= bEAG {
		t.Errorf("server send EAGAIN per 2 MiB: A %.2f, B %.2f: want A > B", aEAG, bEAG)
	}
}

// TestLiveShrinkMoreCalls: B's server goes from 2 MiB to 8 KiB while the
// load runs; the samples after the change show at least 8× the client's
// receive calls per 2 MiB of those before.
func TestLiveShrinkMoreCalls(t *testing.T) {
	cfg := effectConfig()
	cfg.Mode = model.ModeConcurrent
	big := bigBuf(t)
	cfg.Sides[1].SndBuf = big
	p := startPair(t, cfg)
	if err := p.SetPaused(0, true); err != nil { // A is not part of this test
		t.Fatal(err)
	}
	before, after := &tally{}, &tally{}
	collect(t, p, 30*time.Second, map[model.SideID]*tally{"B": before}, func(_ model.SideID, st model.Stamp) bool { return st.SndBuf == big.String() })
	if err := applyText(p, 1, model.SetSndBuf, "macos"); err != nil {
		t.Fatal(err)
	}
	collect(t, p, 30*time.Second, map[model.SideID]*tally{"B": after}, func(_ model.SideID, st model.Stamp) bool { return st.SndBuf == "macos" })
	bRecv, aRecv := before.per2MiB(before.client.RecvCalls), after.per2MiB(after.client.RecvCalls)
	t.Logf("B's client receive calls per 2 MiB: %.2f at %s (%d samples), %.2f at macos (%d samples): %.1fx", bRecv, big, before.samples, aRecv, after.samples, aRecv/bRecv)
	if aRecv < 8*bRecv {
		t.Errorf("receive calls per 2 MiB after the change to 8 KiB %.2f, before at %s %.2f: want ≥ 8×", aRecv, big, bRecv)
	}
}

// TestSmallClientBufferMoreSends (issue 17): writes, A's client at macOS's
// 8 KiB send buffer and B's at 2 MiB in one run. The client sends the bulk
// data, so its send calls plus send EAGAIN per 2 MiB show the buffer: at
// least 8× higher at 8 KiB.
func TestSmallClientBufferMoreSends(t *testing.T) {
	cfg := effectConfig()
	for i := range cfg.Sides {
		cfg.Sides[i].Workload = model.WorkWrite
		cfg.Sides[i].SndBuf = model.Buf{}
	}
	cfg.Sides[0].ClientSndBuf = model.Buf{Kind: model.BufMacOS}
	cfg.Sides[1].ClientSndBuf = bigBuf(t)
	p := startPair(t, cfg)
	a, b := &tally{}, &tally{}
	collect(t, p, 60*time.Second, map[model.SideID]*tally{"A": a, "B": b}, func(side model.SideID, st model.Stamp) bool {
		return st.Workload == model.WorkWrite && st.ClientSndBuf == cfg.Sides[side.Index()].ClientSndBuf.String()
	})
	aSend := a.per2MiB(a.client.SendCalls + a.client.SendEAGAIN)
	bSend := b.per2MiB(b.client.SendCalls + b.client.SendEAGAIN)
	t.Logf("client send calls + send EAGAIN per 2 MiB: A (%s) %.2f (%.2f + %.2f), B (%s) %.2f (%.2f + %.2f): %.1fx; server receive calls per 2 MiB: A %.2f, B %.2f",
		cfg.Sides[0].ClientSndBuf, aSend, a.per2MiB(a.client.SendCalls), a.per2MiB(a.client.SendEAGAIN),
		cfg.Sides[1].ClientSndBuf, bSend, b.per2MiB(b.client.SendCalls), b.per2MiB(b.client.SendEAGAIN), aSend/bSend,
		a.per2MiB(a.server.RecvCalls), b.per2MiB(b.server.RecvCalls))
	if aSend < 8*bSend {
		t.Errorf("client send calls + EAGAIN per 2 MiB: A %.2f at 8 KiB, B %.2f at %s: want A ≥ 8× B", aSend, bSend, cfg.Sides[1].ClientSndBuf)
	}
}
