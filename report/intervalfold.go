package report

import (
	"math"

	"nbdscope/model"
)

// IntervalFolder folds a run's samples into run --intervals lines: a
// side's active samples into one line per Width seconds of the run's
// clock (1 s by default, as iperf3's; the sample interval when -i asks
// for it), added up with model.Figures.Add as the run's summary adds them,
// and each idle stretch (paused, or not its turn) into one line, where a
// line per 250 ms sample made half the lines "idle". A change of a side
// ends its line, so no line mixes two settings' samples before the change.
type IntervalFolder struct {
	Width    float64 // seconds a line covers; ≤ 0: a line per sample
	interval float64 // the span of a side's first sample
	sides    map[model.SideID]*foldedLine
}

// foldedLine is a side's line being added up.
type foldedLine struct {
	prevT   float64 // end of the side's last sample
	open    bool    // some samples are in it
	from    float64 // its start
	bucket  float64 // its Width bucket (active lines)
	sample  model.Sample
	figures model.Figures
}

// NewIntervalFolder folds samples of interval seconds into lines of width.
func NewIntervalFolder(width, interval float64) *IntervalFolder {
	return &IntervalFolder{Width: width, interval: interval, sides: map[model.SideID]*foldedLine{}}
}

// Sample adds a sample and returns the lines it completes.
func (f *IntervalFolder) Sample(s model.Sample) []string {
	l := f.sides[s.Side]
	if l == nil {
		l = &foldedLine{prevT: max(0, s.T-f.interval)}
		f.sides[s.Side] = l
	}
	from := l.prevT
	l.prevT = s.T
	bucket := f.bucketOf(from, s.T)
	var out []string
	if l.open && (l.sample.Active != s.Active || s.Active && bucket != l.bucket) {
		out = append(out, l.line())
	}
	if !l.open {
		l.open, l.from, l.bucket, l.sample, l.figures = true, from, bucket, s, model.Figures{}
	}
	l.sample.T, l.sample.Warming = s.T, l.sample.Warming || s.Warming
	if s.Active {
		l.figures = l.figures.Add(s.Figures) // Changed too: any sample's, or settings that differ
		if f.Width <= 0 {
			out = append(out, l.line()) // a line per sample: now, not at the next
		}
	}
	return out
}

// bucketOf is the Width bucket of a sample from-to: the one its middle
// falls in, so that a sample ending a few ms past a second (its tick's
// jitter) still counts in the second it mostly covers.
func (f *IntervalFolder) bucketOf(from, to float64) float64 {
	if f.Width <= 0 {
		return to // every sample its own
	}
	return math.Floor((from + to) / 2 / f.Width)
}

// Flush returns the lines being added up for side (every side for
// model.WholePair): a change of it took effect, or the run ended.
func (f *IntervalFolder) Flush(side model.SideID) []string {
	var out []string
	for _, id := range []model.SideID{model.SideA, model.SideB} {
		if l := f.sides[id]; l != nil && l.open && (side == model.WholePair || side == id) {
			out = append(out, l.line())
		}
	}
	return out
}

// line is the folded line, and starts a new one.
func (l *foldedLine) line() string {
	s := l.sample
	if s.Active {
		s.Figures = l.figures
	}
	l.open = false
	return IntervalLine(l.from, s)
}
