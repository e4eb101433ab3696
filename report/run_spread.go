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
// stats.Of over the steady samples), and whether the sides differ beyond
// the run's noise (model.SidesDifference, the one verdict).

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

// printSidesNoise says whether the sides' throughputs differ beyond the
// run's noise, from the verdict its B/A cell prints; nothing when a side
// changed during the run (its batches mix settings) or it cannot judge.
func printSidesNoise(w io.Writer, rep model.Report) {
	if len(rep.Sides) != 2 || rep.Changed() {
		return
	}
	d := model.SidesDifference(rep, func(sm model.Summary) model.Figure { return sm.ThroughputBps })
	n := fmt.Sprintf("batches: A %d, B %d", d.NA, d.NB)
	switch d.Kind {
	case stats.Within:
		fmt.Fprintf(w, "A vs B throughput: B/A %s, within noise (%s): neither side is faster%s\n", d.Cell(), n, turnsText(rep, d))
	case stats.Beyond:
		fmt.Fprintf(w, "A vs B throughput: B/A %s, beyond noise (%s)\n", d.Cell(), n)
	case stats.TooFew:
		// One batch on a side has no spread: say how long a run gives
		// each side two, rather than nothing.
		turn := model.TurnLength(rep.Config.Interval.D())
		two := 2 * turn
		if rep.Config.Mode == model.ModeAlternate {
			two *= 2
		}
		fmt.Fprintf(w, "A vs B throughput: B/A %s, not judged against noise (%s: one has no spread); a run of at least %v gives each side two\n",
			d.Cell(), n, two)
	}
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
