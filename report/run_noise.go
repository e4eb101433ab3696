package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/stats"
	"nbdscope/units"
)

// Whether the sides differ beyond a run's own noise: every B/A cell and
// line prints the one verdict of its figure (model.SidesDifference: Welch's
// test over each side's batches, the ratio's interval), never a rule of
// its own.

// size formats a byte count ("1.8 MiB"), n/a when unknown.
func size(v model.Figure) string {
	if !v.Known() {
		return "n/a"
	}
	return units.FormatBytes(float64(v))
}

// ratioCell is a B/A cell: the ratio with its ≈ mark and interval, from
// the figure's verdict ("1.27x [1.21–1.33]", "0.0105x ≈ [0–∞]"); the bare
// ratio where the sides have no batches to judge by.
func ratioCell(rep model.Report, get summaryGetter, a, b model.Figure) string {
	if d := model.SidesDifference(rep, get); d.Kind != stats.NoData {
		return d.Cell()
	}
	return ratio(a, b)
}

// spreadLegend says what a B/A cell's interval and ≈ mean, when the table
// has any: a reader meets "1.03x ≈ [0.61–1.74]" with nothing else to go on.
func spreadLegend(t Table) string {
	interval, within := false, false
	for _, row := range t.Rows {
		c := row[len(row)-1]
		interval = interval || strings.Contains(c, "[")
		within = within || strings.Contains(c, "≈")
	}
	const what = "B/A [low–high]: the ratio's 95% interval, from each side's batches (a turn, or a second, each: Welch's t-test, docs/figures.md)"
	switch {
	case within:
		return what + "; ≈: the interval holds 1, no difference beyond the run's own noise"
	case interval:
		return what
	}
	return ""
}

// turnsText is how long a run would tell what this one cannot: "about 9
// batches a side would tell (a run of about 20 s)", from the verdict's
// Tell; "" when it has none.
func turnsText(rep model.Report, d model.Difference) string {
	switch {
	case d.Tell == stats.TellNever:
		return fmt.Sprintf("; no run of up to %d batches a side would tell them apart at this difference", stats.TellMax)
	case d.Tell <= 0:
		return ""
	}
	turn := model.TurnLength(rep.Config.Interval.D())
	secs := time.Duration(d.Tell) * turn
	if rep.Config.Mode == model.ModeAlternate {
		secs *= 2 // the sides take turns
	}
	return fmt.Sprintf("; about %d batches a side would tell (a run of about %v)", d.Tell, secs.Round(time.Second))
}

// printNoise says who waited on whom when no pace line does, and whether
// the headline calls differ by less than their noise.
func printNoise(w io.Writer, rep model.Report) {
	if !paceJudged(rep) {
		// The pace lines (which carry the fill) are not printed; who
		// waited on whom still reads off the fill.
		for _, s := range rep.Sides {
			if ft := phrase.WaitText(model.VerdictOf(s.Summary.Figures).Unjudged()); ft != "" && !s.Summary.Changed {
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
	if cv := model.SidesDifference(rep, calls); cv.Within() {
		fmt.Fprintf(w, "A vs B %s recv calls/2MiB: B/A %s, within noise: neither side makes fewer%s\n", a.Summary.ReceiverName(), cv.Cell(), turnsText(rep, cv))
	}
}
