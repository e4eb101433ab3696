package engine

import (
	"context"
	"strings"
	"testing"

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
