// Package stats is the one definition of a spread and of "within noise":
// hyperfine's statistics (mean ± σ, min … max, median over the repeats),
// and Welch's t-test with the 95% interval of a ratio (welch.go), used by
// every sweep row, a run's batches, and every comparison that would
// otherwise name a winner.
package stats

import (
	"math"
	"slices"
)

// Summary describes a set of measurements the way hyperfine prints one.
// With no measurements every figure is NaN; with one, Stddev is NaN (a
// spread needs two).
type Summary struct {
	N      int
	Mean   float64
	Stddev float64 // sample standard deviation (n−1), as hyperfine's
	Median float64
	Min    float64
	Max    float64
}

// Of summarises xs (NaN values are left out: a measurement that failed).
func Of(xs []float64) Summary {
	vs := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			vs = append(vs, x)
		}
	}
	nan := math.NaN()
	s := Summary{N: len(vs), Mean: nan, Stddev: nan, Median: nan, Min: nan, Max: nan}
	if len(vs) == 0 {
		return s
	}
	slices.Sort(vs)
	s.Min, s.Max = vs[0], vs[len(vs)-1]
	if n := len(vs); n%2 == 1 {
		s.Median = vs[n/2]
	} else {
		s.Median = (vs[n/2-1] + vs[n/2]) / 2
	}
	sum := 0.0
	for _, v := range vs {
		sum += v
	}
	s.Mean = sum / float64(len(vs))
	if len(vs) > 1 {
		ss := 0.0
		for _, v := range vs {
			ss += (v - s.Mean) * (v - s.Mean)
		}
		s.Stddev = math.Sqrt(ss / float64(len(vs)-1))
	}
	return s
}

// RelStddev is σ as a share of the mean (0.05 = 5%); NaN when unknown.
func (s Summary) RelStddev() float64 {
	if s.N < 2 || s.Mean == 0 {
		return math.NaN()
	}
	return s.Stddev / math.Abs(s.Mean)
}
