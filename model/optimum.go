package model

import (
	"encoding/json"

	"nbdscope/stats"
)

// The optimum of a sweep is one verdict, judged here once from the rows'
// measurements (their repeats) by the one rule of "within noise"
// (stats.Welch), and read by every output: sweep's table and optimum
// line, runs list, runs show, the sweep's SVG and --json (package
// phrase words it). A sweep read
// from a file is judged again from its rows, so a sweep saved by an older
// nbdscope reads with today's verdict.

// OptimumKind is what the verdict found.
type OptimumKind string

const (
	// OptimumClear: the fastest size is faster than every other beyond
	// noise; it is named the optimum.
	OptimumClear OptimumKind = "clear"
	// OptimumNoneClear: sizes within noise of the fastest (Tied); none is
	// named, and Repeats says how many would tell.
	OptimumNoneClear OptimumKind = "none_clear"
	// OptimumUnjudged: the fastest, or a size it is compared with, has
	// fewer than two measurements: no spread to judge by. The fastest is
	// named as the fastest measured, not the optimum.
	OptimumUnjudged OptimumKind = "unjudged"
)

// OptimumVerdict is whether the fastest size is told apart from the
// others.
type OptimumVerdict struct {
	Kind OptimumKind `json:"kind"`
	// MeanBps is the fastest size's mean throughput over its repeats, what
	// it is the fastest by (its row shows its median measurement's).
	MeanBps Figure `json:"mean_throughput_bps"`
	// RunnerUp is the size with the next highest mean throughput; Lead
	// the fastest's throughput over it (ratio of the means, interval).
	RunnerUp string     `json:"runner_up,omitempty"`
	Lead     Difference `json:"lead"`
	// VsDefault is the fastest's throughput over the default's, judged
	// the same way (no_data when the default was not swept).
	VsDefault Difference `json:"vs_default"`
	// Tied are the sizes within noise of the fastest, it among them, in
	// sweep order (none clear); the fastest alone when clear.
	Tied []string `json:"tied,omitempty"`
	// Repeats is, when none is clear, the measurements per size at which
	// the fastest would be told apart from every tied size, at the
	// observed differences and spreads (stats.Verdict.Tell);
	// stats.TellNever when none up to stats.TellMax would.
	Repeats int `json:"repeats_to_tell,omitempty"`
}

// Named is the optimum's size when the verdict names one, else "".
func (o *SweepOptimum) Named() string {
	if o == nil || o.Verdict.Kind != OptimumClear {
		return ""
	}
	return o.Buffer
}

// rowMean is a row's throughput as the verdict compares it: the mean of
// its measurements, or its own figure where they are not kept.
func rowMean(r SweepRow) Figure {
	if s := r.ThroughputStats(); s.N > 0 {
		return Figure(s.Mean)
	}
	return r.ThroughputBps
}

// OptimumOf finds the fastest row and judges it; nil when no row has a
// throughput above 0. A tie goes to the first (smaller) size.
func OptimumOf(rows []SweepRow) *SweepOptimum {
	best := -1
	for i, r := range rows {
		// A size that moved no payload (a client that read only holes) has
		// no throughput to be best at.
		if m := rowMean(r); m.Known() && m > 0 && (best < 0 || m > rowMean(rows[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	top := rows[best].ThroughputBps
	pace := rows[best].Pace()
	o := &SweepOptimum{Buffer: rows[best].Buffer, ThroughputBps: top, VsDefault: Unknown, Pace: &pace,
		Verdict: judgeOptimum(rows, best)}
	for _, r := range rows {
		if r.Buffer == BufDefaultName && r.ThroughputBps.Known() && r.ThroughputBps > 0 {
			o.VsDefault = top / r.ThroughputBps
		}
		if r.ThroughputBps.Known() && float64(r.ThroughputBps) >= (1-OptimumTolerance)*float64(top) {
			o.Within5Pct = append(o.Within5Pct, r.Buffer)
		}
	}
	return o
}

// rowSummary is the summary of a row's measured throughputs; a row saved
// without them is one measurement, its own figure.
func rowSummary(r SweepRow) stats.Summary {
	if s := r.ThroughputStats(); s.N > 0 {
		return s
	}
	return stats.Of([]float64{float64(r.ThroughputBps)})
}

// SweepRowsDifference judges row b against row a (the same size in two
// sweeps) over their measured throughputs, as the optimum is judged.
func SweepRowsDifference(a, b SweepRow) Difference { return DifferenceOf(rowSummary(a), rowSummary(b)) }

// judgeOptimum compares the fastest row (rows[best]) with every other.
func judgeOptimum(rows []SweepRow, best int) OptimumVerdict {
	top := rowSummary(rows[best])
	v := OptimumVerdict{Kind: OptimumClear, MeanBps: Figure(top.Mean), Lead: DifferenceOf(stats.Summary{}, top), VsDefault: DifferenceOf(stats.Summary{}, top)}
	next, unjudged := -1, top.N < 2
	for i, r := range rows {
		if r.Buffer == BufDefaultName && i != best {
			v.VsDefault = DifferenceOf(rowSummary(r), top)
		}
		if i == best {
			v.Tied = append(v.Tied, r.Buffer)
			continue
		}
		if m := rowMean(r); !m.Known() || m <= 0 {
			continue
		}
		if next < 0 || rowMean(r) > rowMean(rows[next]) {
			next = i
		}
		switch d := DifferenceOf(rowSummary(r), top); d.Kind {
		case stats.Within:
			v.Tied = append(v.Tied, r.Buffer)
			v.Repeats = mostRepeats(v.Repeats, d.Tell)
		case stats.TooFew:
			unjudged = true
		}
	}
	if next >= 0 {
		v.RunnerUp, v.Lead = rows[next].Buffer, DifferenceOf(rowSummary(rows[next]), top)
	}
	switch {
	case unjudged:
		v.Kind, v.Tied, v.Repeats = OptimumUnjudged, nil, 0
	case len(v.Tied) > 1:
		v.Kind = OptimumNoneClear
	}
	return v
}

// mostRepeats is the larger of two counts of repeats that would tell,
// never (stats.TellNever) above any number.
func mostRepeats(a, b int) int {
	if a == stats.TellNever || b == stats.TellNever {
		return stats.TellNever
	}
	return max(a, b)
}

// UnmarshalJSON reads a sweep's report and judges its optimum again from
// its rows (OptimumOf): the optimum a file holds, of whatever version,
// is not read.
func (r *SweepReport) UnmarshalJSON(b []byte) error {
	type plain SweepReport
	var v struct {
		plain
		Optimum json.RawMessage `json:"optimum"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = SweepReport(v.plain)
	r.Optimum = OptimumOf(r.Rows)
	r.settleMacOS()
	return nil
}
