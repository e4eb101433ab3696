package model

import "testing"

// TestFillSourceCarried: what measured a span's fill goes through its
// figures and when spans are added (the later's), as the explorer's fill
// row reads it.
func TestFillSourceCarried(t *testing.T) {
	var f, g Figures
	f.SetFill(Fill{Samples: 10, FullPct: 50, EmptyPct: 10, Bytes: 1000, Limit: 2000, Source: FillSourceKernel})
	g.SetFill(Fill{Samples: 10, FullPct: 30, EmptyPct: 20, Bytes: 800, Limit: 2000, Source: FillSourceSampler, Sampled: FillSampledTCP})
	if got := f.Fill(); got.Source != FillSourceKernel || got.Sampled != "" {
		t.Errorf("one span: source %q (%q)", got.Source, got.Sampled)
	}
	if got := f.Fill().Add(g.Fill()); got.Source != FillSourceSampler || got.Sampled != FillSampledTCP {
		t.Errorf("added: source %q (%q), want the later's", got.Source, got.Sampled)
	}
	if got := f.Fill().Add(Fill{Samples: 5, FullPct: 1, EmptyPct: 1}); got.Source != FillSourceKernel {
		t.Errorf("added a span that says none: source %q, want the earlier's", got.Source)
	}
	g.SetFill(NoFill)
	if g.SndBufFillSource != "" {
		t.Errorf("an unmeasured span keeps the source %q", g.SndBufFillSource)
	}
}
