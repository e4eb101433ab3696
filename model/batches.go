package model

import (
	"time"

	"nbdscope/stats"
)

// Within noise, for a run: one run's samples follow each other, and a
// sample is much like the one before it (a buffer's fill, the cache, the
// other side's turn carry over), so a test over samples as if each were
// independent is overconfident. The measurements judged are batch means
// instead: a side's steady samples (Sample.Steady) cut into batches of a
// turn's length (TurnLength: 4 intervals, at least 1 s), each closed early
// where the side stops being steady (its turn ended, a setting changed),
// and kept when it holds at least half a turn. In alternate mode a batch
// is a turn; in concurrent mode a second at the default interval.
//
// A batch's figure is its samples added up as the summary adds them
// (Figures.Add: a throughput is its bytes over its seconds), or, for a
// figure that does not add (a latency percentile), the mean of its
// samples' own. The mean compared is the side's own figure over the run
// (what its column prints), with the spread of its batches as the spread
// of a measurement: the batch means method (for a percentile, sectioning).

// batchSamples is how many samples make a batch at the run's interval.
func batchSamples(interval time.Duration) int {
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	return max(int(TurnLength(interval)/interval), 1)
}

// batchFigure is one batch's figure (see above); unknown when none of its
// samples has it.
func batchFigure(batch []Sample, pick func(Summary) Figure) Figure {
	var sum Figures
	for _, s := range batch {
		sum = sum.Add(s.Figures)
	}
	if v := pick(Summary{Figures: sum}); v.Known() {
		return v
	}
	var total float64
	n := 0
	for _, s := range batch {
		if v := pick(Summary{Figures: s.Figures}); v.Known() {
			total += float64(v)
			n++
		}
	}
	if n == 0 {
		return Unknown
	}
	return Figure(total / float64(n))
}

// BatchesOf is the summary of side's batches of one figure (see above):
// N batches, σ of their figures, and as its mean the side's own figure
// over the run (whole); N is 0 when the run has no such side or figure.
func BatchesOf(rep Report, side SideID, pick func(Summary) Figure) stats.Summary {
	var whole *Summary
	for i := range rep.Sides {
		if rep.Sides[i].ID() == side {
			whole = &rep.Sides[i].Summary
		}
	}
	if whole == nil || !pick(*whole).Known() {
		return stats.Of(nil)
	}
	per := batchSamples(rep.Config.Interval.D())
	var xs []float64
	var batch []Sample
	flush := func() {
		if len(batch) > 0 && 2*len(batch) >= per {
			if v := batchFigure(batch, pick); v.Known() {
				xs = append(xs, float64(v))
			}
		}
		batch = batch[:0]
	}
	for _, s := range rep.Samples {
		switch {
		case s.Side != side:
		case !s.Steady():
			flush()
		default:
			if batch = append(batch, s); len(batch) == per {
				flush()
			}
		}
	}
	flush()
	sum := stats.Of(xs)
	if sum.N > 0 {
		sum.Mean = float64(pick(*whole))
	}
	return sum
}

// SidesDifference judges side B against side A of a run on one figure,
// over their batches.
func SidesDifference(rep Report, pick func(Summary) Figure) Difference {
	if len(rep.Sides) != 2 {
		return DifferenceOf(stats.Summary{}, stats.Summary{})
	}
	return DifferenceOf(BatchesOf(rep, rep.Sides[0].ID(), pick), BatchesOf(rep, rep.Sides[1].ID(), pick))
}

// RunsDifference judges run b's side against run a's same side on one
// figure, over their batches (runs compare).
func RunsDifference(a, b Report, side SideID, pick func(Summary) Figure) Difference {
	return DifferenceOf(BatchesOf(a, side, pick), BatchesOf(b, side, pick))
}

// SidesDifferences are the B/A verdicts of every summary figure whose
// ratio means something, by its CSV column name: what run's table prints
// in its B/A column (SidesDifference), for the JSON (Report.BOverA). nil
// without two sides.
func SidesDifferences(rep Report) map[string]Difference {
	if len(rep.Sides) != 2 {
		return nil
	}
	out := map[string]Difference{}
	for _, e := range SummaryFigures() {
		if !e.Ratio {
			continue
		}
		if d := SidesDifference(rep, func(s Summary) Figure { return e.Get(&s.Figures) }); d.HasData() {
			out[e.Name()] = d
		}
	}
	return out
}
