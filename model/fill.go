package model

import (
	"encoding/json"
	"math"
)

// This file holds the send-buffer fill of a span: how full the bulk
// sender's data sockets were, sampled from outside by the controller
// (probe/sockdiag, 100 times a second). Whether the buffer was full or
// empty says who waited on whom, and so whether its size can matter.

// Fill thresholds, as shares of the sender's limit (SK_MEMINFO_SNDBUF):
// at or over FillFullShare the sender waited for its reader; under
// FillEmptyShare the reader waited for the sender.
const (
	FillFullShare  = 0.90
	FillEmptyShare = 0.10
)

// Fill is the send-buffer fill of the bulk sender's data sockets over a
// span. A sample is one sender socket seen at one tick of the sampler.
// With Samples == 0 nothing was measured and every figure is unknown.
type Fill struct {
	Samples  int
	FullPct  Figure // share of samples at ≥ 90% of the limit, in percent
	EmptyPct Figure // share of samples under 10% of the limit, in percent
	Bytes    Figure // mean bytes in flight (charged against the limit)
	Limit    int64  // the largest limit seen, bytes
	// Current is the mean bytes in flight at the span's last tick: the
	// gauge's "now" (not kept when spans are added).
	Current Figure
	// Source is what measured it (FillSourceKernel, FillSourceEvents or
	// FillSourceSampler,
	// "" where not said: a saved run's from before); Sampled, for the
	// sampler where the run asked for the kernel, why (FillSampled…).
	// Spans added keep the later's.
	Source, Sampled string
}

// What measured a side's fill (SideReport.FillSource): programs in the
// kernel, reading each unix sender's level at a timer's tick, 1000 times
// a second whatever the data rate (FillSourceKernel, the default); or
// programs in the kernel at every change of the sender's buffer, weighing
// each level by the time it lasted, at about 600 ns an skb
// (FillSourceEvents, asked for); or the sampler, from user space 100
// times a second, weighing each sample alike.
const (
	FillSourceKernel  = "kernel"
	FillSourceEvents  = "kernel-events"
	FillSourceSampler = "sampler"
)

// FillInKernel says source is one of the kernel's.
func FillInKernel(source string) bool {
	return source == FillSourceKernel || source == FillSourceEvents
}

// Why a side's fill was sampled where the run asked for the kernel
// (Fill.SampledWhy): the sampler was asked for (--fill-source sampler),
// the data sockets are TCP (the programs measure unix senders), or the
// programs could not load here (doctor says why).
const (
	FillSampledAsked = "asked"
	FillSampledTCP   = "tcp"
	FillSampledNoBPF = "no-bpf"
)

// NoFill is a span whose fill was not measured.
var NoFill = Fill{FullPct: Unknown, EmptyPct: Unknown, Bytes: Unknown, Current: Unknown}

// Known says the fill was measured over at least one sample.
func (f Fill) Known() bool { return f.Samples > 0 && f.FullPct.Known() }

// Add is the fill of two spans together: the shares and the mean bytes
// weighted by each span's samples, the larger limit.
func (f Fill) Add(o Fill) Fill {
	if !o.Known() {
		return f
	}
	if !f.Known() {
		return o
	}
	n, m := float64(f.Samples), float64(o.Samples)
	w := func(a, b Figure) Figure { return Figure((float64(a)*n + float64(b)*m) / (n + m)) }
	src, sampled := o.Source, o.Sampled
	if src == "" {
		src, sampled = f.Source, f.Sampled
	}
	return Fill{Samples: f.Samples + o.Samples, FullPct: w(f.FullPct, o.FullPct), EmptyPct: w(f.EmptyPct, o.EmptyPct),
		Bytes: w(f.Bytes, o.Bytes), Limit: max(f.Limit, o.Limit), Current: o.Current, Source: src, Sampled: sampled}
}

// CurrentShare is the current fill as a share of the limit (0…1, for a
// gauge); unknown without a limit.
func (f Fill) CurrentShare() Figure {
	if !f.Known() || f.Limit <= 0 || !f.Current.Known() {
		return Unknown
	}
	return Figure(math.Min(1, float64(f.Current)/float64(f.Limit)))
}

// Fill is the span's send-buffer fill; every figure unknown when it was
// not measured (a saved run from before fill was sampled reads so too).
func (f *Figures) Fill() Fill {
	if f.SndBufFillSamples <= 0 || !f.SndBufFullPct.Known() {
		return NoFill
	}
	return Fill{Samples: f.SndBufFillSamples, FullPct: f.SndBufFullPct.Figure(), EmptyPct: f.SndBufEmptyPct.Figure(),
		Bytes: f.SndBufFillBytes.Figure(), Limit: f.SndBufFillLimit, Current: Unknown,
		Source: f.SndBufFillSource, Sampled: f.SndBufFillSampled}
}

// MaybeFigure is a figure whose zero value is unknown, for figures added
// to Figures after runs were saved without them and for spans built
// without them: null in JSON, never a 0 nobody measured.
type MaybeFigure struct {
	V  Figure
	OK bool // V was measured
}

// Measured is a known figure (the zero MaybeFigure when f is unknown).
func Measured(f Figure) MaybeFigure {
	if !f.Known() {
		return MaybeFigure{}
	}
	return MaybeFigure{V: f, OK: true}
}

// Figure is the figure, Unknown when not measured.
func (m MaybeFigure) Figure() Figure {
	if !m.OK {
		return Unknown
	}
	return m.V
}

// Known says the figure was measured.
func (m MaybeFigure) Known() bool { return m.OK && m.V.Known() }

// MarshalJSON writes the figure, or null.
func (m MaybeFigure) MarshalJSON() ([]byte, error) { return m.Figure().MarshalJSON() }

// UnmarshalJSON reads a figure; null is unknown.
func (m *MaybeFigure) UnmarshalJSON(b []byte) error {
	var f Figure
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*m = Measured(f)
	return nil
}

// SetFill records a span's fill in its figures (unknown when not measured).
func (f *Figures) SetFill(fl Fill) {
	if !fl.Known() {
		fl = NoFill
	}
	f.SndBufFullPct, f.SndBufEmptyPct, f.SndBufFillBytes = Measured(fl.FullPct), Measured(fl.EmptyPct), Measured(fl.Bytes)
	f.SndBufFillSamples, f.SndBufFillLimit = fl.Samples, fl.Limit
	f.SndBufFillSource, f.SndBufFillSampled = fl.Source, fl.Sampled
}
