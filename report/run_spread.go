package report

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"nbdscope/model"
	"nbdscope/stats"
)

// How steady a run's sides were: each side's (and each stretch's) mean ±
// σ of its samples' throughput and receive calls per 2 MiB (model.Spread,
// stats.Of over the steady samples), and whether the difference between
// the sides is larger than that spread (stats.Compare).

// spreadRate is "5.27 GiB/s ± 2.3% (n=38)"; n/a without samples.
func spreadRate(sp *model.Spread) string {
	if sp == nil || sp.ThroughputBps.N == 0 {
		return model.NA
	}
	s := sp.ThroughputBps
	return rate(model.Figure(s.Mean)) + " ± " + relSigma(s) + " (n=" + strconv.Itoa(s.N) + ")"
}

// spreadRecv is "13.5 ± 0.4 (n=38)".
func spreadRecv(sp *model.Spread) string {
	if sp == nil || sp.RecvCallsPer2MiB.N == 0 {
		return model.NA
	}
	s := sp.RecvCallsPer2MiB
	return model.Figure(s.Mean).Fixed(1) + " ± " + model.Figure(s.Stddev).Fixed(1) + " (n=" + strconv.Itoa(s.N) + ")"
}

// relSigma is σ as a share of the mean, "2.3%" (n/a with one sample).
func relSigma(s stats.Summary) string {
	r := s.RelStddev()
	if math.IsNaN(r) {
		return model.NA
	}
	return strconv.FormatFloat(r*100, 'f', 1, 64) + "%"
}

// spreadRows are the summary table's rows of the sides' spread.
var spreadRows = []textRow{
	{"throughput mean ± σ (samples)", func(sm model.Summary) string { return spreadRate(sm.Spread) }, false},
	{"recv calls/2MiB mean ± σ", func(sm model.Summary) string { return spreadRecv(sm.Spread) }, false},
}

// printSidesNoise says whether the sides' throughputs differ by more than
// the spread of their samples; nothing when a side changed during the run
// (its samples mix settings) or the spreads are not known.
func printSidesNoise(w io.Writer, rep model.Report) {
	if len(rep.Sides) != 2 || rep.Changed() {
		return
	}
	a, b := rep.Sides[0].Summary.Spread, rep.Sides[1].Summary.Spread
	if a == nil || b == nil {
		return
	}
	v := stats.Compare(a.ThroughputBps, b.ThroughputBps)
	if !v.Known {
		return
	}
	noise := pct(model.Figure(v.Noise))
	if v.Within {
		fmt.Fprintf(w, "A vs B throughput: within noise (±%s of A's mean, the σ of their samples): neither side is faster\n", noise)
		return
	}
	// The noise as a share of A's mean reads as nonsense beside a large
	// ratio (±818% next to 33x): say the difference and each side's own
	// spread instead, which is what the verdict compares.
	fmt.Fprintf(w, "A vs B throughput: B/A %s, beyond the noise of their samples (the means differ by %s of A's; A's σ %s, B's σ %s of their means)\n",
		model.Figure(b.ThroughputBps.Mean/a.ThroughputBps.Mean).Ratio(), pct(model.Figure(math.Abs(v.Diff))),
		pct(model.Figure(a.ThroughputBps.RelStddev())), pct(model.Figure(b.ThroughputBps.RelStddev())))
}

// printSegmentSpreads prints each stretch's spread, a line each.
func printSegmentSpreads(w io.Writer, rep model.Report) {
	for _, s := range rep.Sides {
		for _, g := range s.Segments {
			if g.Spread == nil || g.Spread.ThroughputBps.N == 0 {
				continue
			}
			fmt.Fprintf(w, "spread %s %.1f–%.1f s (%s): throughput %s, recv calls/2MiB %s\n", s.Name, g.From, g.To, g.Settings.SndBuf,
				spreadRate(g.Spread), spreadRecv(g.Spread))
		}
	}
}
