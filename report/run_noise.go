package report

import (
	"fmt"
	"io"
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/stats"
	"nbdscope/units"
)

// The spread of a run's A/B ratios: σ over the samples of each side's
// steady stretch (stats.Steady), judged by the one rule (stats.Compare),
// so that a difference smaller than the run's own noise names no winner.

// fillFig reads a figure of the summary's send-buffer fill.
func fillFig(f func(model.Fill) model.Figure) summaryGetter {
	return func(sm model.Summary) model.Figure { return f(sm.Fill()) }
}

// size formats a byte count ("1.8 MiB"), n/a when unknown.
func size(v model.Figure) string {
	if !v.Known() {
		return "n/a"
	}
	return units.FormatBytes(float64(v))
}

// steadyOf summarises one table row's figure over side i's steady samples.
func steadyOf(rep model.Report, i int, get summaryGetter) stats.Summary {
	return model.SteadyOf(rep.Samples, rep.Sides[i].ID(), func(f *model.Figures) model.Figure {
		return get(model.Summary{Figures: *f})
	})
}

// verdictOf judges B against A on one row's figure.
func verdictOf(rep model.Report, get summaryGetter) stats.Verdict {
	if len(rep.Sides) != 2 {
		return stats.Verdict{}
	}
	return stats.Compare(steadyOf(rep, 0, get), steadyOf(rep, 1, get))
}

// spreadCell is the spread a ratio cell carries (" ±6%", " ≈ ±6%" when
// within it), "" when it cannot be told.
func spreadCell(rep model.Report, get summaryGetter) string {
	if len(rep.Sides) != 2 {
		return ""
	}
	a, b := steadyOf(rep, 0, get), steadyOf(rep, 1, get)
	v := stats.Compare(a, b)
	sp := stats.RatioSpread(a, b)
	switch {
	case !v.Known || sp == "":
		return ""
	case v.Within:
		return " ≈ " + sp
	}
	return " " + sp
}

// spreadLegend says what a B/A cell's ± and ≈ mean, when the table has
// any: a reader meets "1.03x ≈ ±476%" with nothing else to go on.
func spreadLegend(t Table) string {
	spread, within := false, false
	for _, row := range t.Rows {
		c := row[len(row)-1]
		spread = spread || strings.Contains(c, "±")
		within = within || strings.Contains(c, "≈")
	}
	switch {
	case within:
		return "B/A ±: the ratio's spread, from the σ of each side's steady samples; ≈: B/A is within it, no difference beyond the run's own noise"
	case spread:
		return "B/A ±: the ratio's spread, from the σ of each side's steady samples"
	}
	return ""
}

// printNoise says who waited on whom when no pace line does, and whether
// the headline calls differ by less than their noise.
func printNoise(w io.Writer, rep model.Report) {
	if !paceJudged(rep) {
		// The pace lines (which carry the fill) are not printed; who
		// waited on whom still reads off the fill.
		for _, s := range rep.Sides {
			if ft := phrase.FillText(s.Summary.Fill(), s.Summary.Direction(), model.Pace{}); ft != "" && !s.Summary.Changed {
				fmt.Fprintf(w, "buffer %s (%s): %s\n", s.Name, s.Summary.Settings.SndBuf, ft)
			}
		}
	}
	if len(rep.Sides) != 2 {
		return
	}
	// Throughput's verdict is printSidesNoise's; the headline calls' here.
	a := rep.Sides[0]
	calls := func(sm model.Summary) model.Figure { return sm.ReceiverCallsPer2MiB() }
	if cv := verdictOf(rep, calls); cv.Known && cv.Within {
		fmt.Fprintf(w, "A vs B %s recv calls/2MiB: within noise (%s): neither side makes fewer\n", a.Summary.ReceiverName(), cv.Spread())
	}
}
