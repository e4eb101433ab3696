package engine

import (
	"context"
	"strings"
	"testing"

	"nbdscope/engine/meter"
	"nbdscope/model"
	"nbdscope/platform"
)

// xnuFacts are a Mac's before 14.4, default kern.ipc.maxsockbuf (8 MiB):
// sbreserve refuses above 8388608×2048/2304 = 7456540 bytes.
func xnuFacts() *platform.Facts {
	f := testFacts
	f.OS = "darwin"
	f.SndbufLimit = platform.Limit{Rules: "xnu", Over: platform.OverRefuses, MaxRequest: 7456540, MaxEffective: 7456540,
		Sysctl: "kern.ipc.maxsockbuf", SysctlValue: 8 << 20, Probed: true}
	return &f
}

const xnuFix = "sudo sysctl kern.ipc.maxsockbuf=9437184"

// A run asked to start above the limit fails at once with the fix, and
// starts nothing.
func TestStartRefusesBufferAboveXNULimit(t *testing.T) {
	cfg := testConfig()
	if err := cfg.Sides[1].Set(model.SetClientRcvBuf, "8m"); err != nil {
		t.Fatal(err)
	}
	_, err := StartWith(context.Background(), cfg, Options{Facts: xnuFacts()})
	if err == nil || !strings.Contains(err.Error(), xnuFix) || !strings.Contains(err.Error(), "ENOBUFS") ||
		!strings.Contains(err.Error(), "client-rcvbuf") {
		t.Fatalf("start with 8m on XNU: %v", err)
	}
}

// A live change above the limit is refused with the fix and leaves the
// side as it was; one within it goes through.
func TestLiveChangeRefusedAboveXNULimit(t *testing.T) {
	cfg := testConfig()
	cfg.Sides[1].SndBuf, _ = model.ParseBuf("2m")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := StartWith(ctx, cfg, Options{Facts: xnuFacts()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	err = applyText(p, 1, model.SetSndBuf, "8m")
	if err == nil || !strings.Contains(err.Error(), xnuFix) || !strings.Contains(err.Error(), "7456540 bytes (7.11 MiB)") {
		t.Fatalf("8m on XNU: %v", err)
	}
	got := p.Config().Sides[1].SndBuf.String()
	if got != "2m" {
		t.Fatalf("after a refused change B's sndbuf is %s, want 2m", got)
	}
	if err := applyText(p, 1, model.SetSndBuf, "1m"); err != nil {
		t.Fatalf("1m within the limit: %v", err)
	}
}

// A buffer is clamped by the platform's rule, judged by the engine for
// each buffer of a sample: on Linux an effective size below twice the
// request; on macOS from the request and the limit, not from a live
// readback, which XNU lowers by the bytes queued in the peer; default
// and macos never.
func TestBuffersClamped(t *testing.T) {
	linux := &side{p: &Pair{facts: platform.Facts{SndbufLimit: platform.Limit{Doubles: true, Probed: true, MaxEffective: 4 << 20, MaxRequest: 2 << 20}}}}
	if !linux.clamped("8m", 8<<20) || linux.clamped("1m", 2<<20) {
		t.Error("Linux: 8m → 8m must be clamped, 1m → 2m not")
	}
	if linux.clamped("default", 4096) || linux.clamped("macos", 8192) || linux.clamped("external", 0) {
		t.Error("default, macos or external counted as clamped")
	}
	xnu := platform.Limit{Rules: "xnu", Over: platform.OverRefuses, MaxRequest: 7456540, MaxEffective: 7456540,
		Sysctl: "kern.ipc.maxsockbuf", SysctlValue: 8 << 20, Probed: true}
	mac := &side{p: &Pair{facts: platform.Facts{SndbufLimit: xnu}}}
	if mac.clamped("2m", 512<<10) {
		t.Error("2m with a live readback of 512k flagged clamped on macOS")
	}
	xnu.Over, xnu.MaxRequest, xnu.MaxEffective = platform.OverClamps, 8<<20, 8<<20
	mac.p.facts.SndbufLimit = xnu
	if !mac.clamped("16m", 8<<20) || mac.clamped("8m", 8<<20) {
		t.Error("a clamping XNU: 16m must be clamped, 8m not")
	}
	b := linux.buffers(model.Stamp{ClientSndBuf: "8m", ClientRcvBuf: "1m"}, meter.Reading{Load: meter.Load{Bufs: meter.Bufs{Snd: 8 << 20, Rcv: 2 << 20}}}, false)
	if !b.ClientClamped || b.ClientRcvClamped {
		t.Errorf("a sample's buffers: client %v, client rcv %v; want the client's clamped", b.ClientClamped, b.ClientRcvClamped)
	}
}
