package sweep

import (
	"context"
	"slices"
	"testing"
	"time"

	"nbdscope/engine"
	"nbdscope/internal/childtest"
	"nbdscope/model"
	"nbdscope/platform"
)

// TestSweepClientSndBuf: a sweep of the client's send buffer (issue 17)
// sets it on side A for each size, and each row's effective size is the
// client's send buffer as the kernel gave it, not the server's.
func TestSweepClientSndBuf(t *testing.T) {
	cfg := childtest.Config()
	cfg.Sides[0].Workload = model.WorkWrite
	cfg.Sides[0].SndBuf = model.Buf{Kind: model.BufSize, Bytes: 1 << 20} // the server's, left alone
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sizes := []model.Buf{{Kind: model.BufSize, Bytes: 64 << 10}, {Kind: model.BufSize, Bytes: 256 << 10}}
	rows, err := Sweep(ctx, cfg, model.SweepSpec{Setting: model.SetClientSndBuf, Sizes: sizes, Bytes: 32 << 20, Repeat: 1}, engine.Options{Facts: &testFacts}, nil)
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
	if _, err := Sweep(ctx, cfg, model.SweepSpec{Setting: model.SetConnections, Sizes: sizes, Bytes: 1 << 20, Repeat: 1}, engine.Options{Facts: &testFacts}, nil); err == nil {
		t.Error("a sweep of connections was taken")
	}
}

// TestSweepGoesInRounds: one measurement of each size per round, so a
// slow stretch of a shared machine meets every size alike; each row is
// the median of all its repeats.
func TestSweepGoesInRounds(t *testing.T) {
	cfg := childtest.Config()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sizes := []model.Buf{{Kind: model.BufDefault}, {Kind: model.BufSize, Bytes: 1 << 20}}
	var order []int
	rows, err := Sweep(ctx, cfg, model.SweepSpec{Sizes: sizes, Bytes: 16 << 20, Repeat: 2}, engine.Options{Facts: &testFacts},
		func(p SweepProgress) { order = append(order, p.SizeIndex) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("measured sizes in the order %v, want rounds %v", order, want)
	}
	if len(rows) != 2 || rows[0].Repeats != 2 || rows[1].Repeats != 2 || rows[0].Buffer != "default" || rows[1].Buffer != "1m" {
		t.Errorf("rows %+v: want default and 1m, 2 repeats each", rows)
	}
	// Each measurement moved its 16 MiB exactly, and its time is theirs.
	for _, r := range rows {
		if r.Figures.Bytes != 16<<20 || r.Seconds != r.Figures.Seconds || r.ThroughputBps != model.Throughput(16<<20, r.Seconds) {
			t.Errorf("row %s: %d bytes in %vs (figures %vs), %v B/s: want 16 MiB and its own time", r.Buffer, r.Figures.Bytes, r.Seconds, r.Figures.Seconds, r.ThroughputBps)
		}
	}
}
