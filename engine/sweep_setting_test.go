package engine

import (
	"context"
	"testing"
	"time"

	"nbdscope/engine/platform"
)

// TestSweepClientSndBuf: a sweep of the client's send buffer (issue 17)
// sets it on side A for each size, and each row's effective size is the
// client's send buffer as the kernel gave it, not the server's.
func TestSweepClientSndBuf(t *testing.T) {
	cfg := testConfig()
	cfg.Sides[0].Workload = WorkWrite
	cfg.Sides[0].SndBuf = Buf{Kind: BufSize, Bytes: 1 << 20} // the server's, left alone
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sizes := []Buf{{Kind: BufSize, Bytes: 64 << 10}, {Kind: BufSize, Bytes: 256 << 10}}
	rows, err := Sweep(ctx, cfg, SweepSpec{Setting: SetClientSndBuf, Sizes: sizes, Bytes: 32 << 20, Repeat: 1}, Options{Facts: &testFacts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lim := platform.NativeLimit()
	for i, r := range rows {
		want := lim.Expected(sizes[i].Bytes)
		if r.Buffer != sizes[i].String() || r.Effective != want {
			t.Errorf("row %d: buffer %s effective %d, want %s effective %d (the client's)", i, r.Buffer, r.Effective, sizes[i], want)
		}
	}
	if _, err := Sweep(ctx, cfg, SweepSpec{Setting: SetConnections, Sizes: sizes, Bytes: 1 << 20, Repeat: 1}, Options{Facts: &testFacts}, nil); err == nil {
		t.Error("a sweep of connections was taken")
	}
}
