package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// The one rule for "within noise": Welch's t-test of two sets of
// independent measurements (a sweep's repeats, a run's batch means), at
// 95%, and the 95% confidence interval of the ratio of their means by
// Fieller's method with the test's degrees of freedom. The interval holds
// 1 exactly when the test finds no difference, so a ratio printed with its
// interval and a mark can never disagree.

// Confidence is the level of the test and of the interval.
const Confidence = 0.95

// TellMax is the most measurements a side that "would tell" counts up to;
// beyond it Tell is TellNever: the difference, if any, is far inside the
// noise.
const TellMax = 1000

// TellNever is Tell when no number of measurements up to TellMax would
// tell the two apart at the observed difference (equal means, or a
// difference far smaller than the spread).
const TellNever = -1

// Kind is what a comparison of two sets of measurements found.
type Kind int

const (
	// NoData: a side has no measurement.
	NoData Kind = iota
	// TooFew: a side has one measurement, so no spread to judge by.
	TooFew
	// Within: the interval of the ratio holds 1; no difference is told.
	Within
	// Beyond: the interval excludes 1; the difference is beyond noise.
	Beyond
)

// Verdict is the comparison of b against a: the ratio of their means with
// its interval, the test, and how many measurements a side would tell
// them apart when this one cannot.
type Verdict struct {
	Kind   Kind
	NA, NB int
	// Ratio is mean b / mean a; NaN when a's mean is 0.
	Ratio float64
	// Confidence is the interval's level: Confidence, or a look's level
	// in a sequence of looks (WelchAt).
	Confidence float64
	// Lo, Hi bound the ratio's interval (Fieller), clipped at 0 since
	// the figures compared are never negative; Hi is +Inf when a's mean is
	// itself within noise of 0. NaN unless the Kind is Within or Beyond.
	Lo, Hi float64
	// T, DF and P are Welch's statistic, its degrees of freedom
	// (Welch–Satterthwaite) and the two-sided p value; NaN where the
	// spread is 0 on both sides.
	T, DF, P float64
	// Tell is the number of measurements per side at which the observed
	// difference, with the observed spreads, would be beyond noise: set
	// when the Kind is Within (TellNever when none up to TellMax would);
	// 0 otherwise (a TooFew verdict has no spread to go on).
	Tell int
}

// Known says the verdict judged: Within or Beyond.
func (v Verdict) Known() bool { return v.Kind == Within || v.Kind == Beyond }

// Welch judges b against a (see the package's rule above).
func Welch(a, b Summary) Verdict { return WelchAt(a, b, Confidence) }

// WelchAt is Welch at another level: the test at 1 − conf and the
// interval at conf. Only a sequence of looks at growing sets of the same
// measurements takes it (RepeatedConfidence), so that its intervals
// together hold the truth at Confidence.
func WelchAt(a, b Summary, conf float64) Verdict {
	nan := math.NaN()
	v := Verdict{Kind: NoData, NA: a.N, NB: b.N, Ratio: nan, Lo: nan, Hi: nan, T: nan, DF: nan, P: nan, Confidence: conf}
	if a.N == 0 || b.N == 0 || math.IsNaN(a.Mean) || math.IsNaN(b.Mean) {
		return v
	}
	if a.Mean != 0 {
		v.Ratio = b.Mean / a.Mean
	}
	if a.N < 2 || b.N < 2 || math.IsNaN(a.Stddev) || math.IsNaN(b.Stddev) {
		v.Kind = TooFew
		return v
	}
	va, vb := a.Stddev*a.Stddev/float64(a.N), b.Stddev*b.Stddev/float64(b.N)
	d := b.Mean - a.Mean
	if va+vb == 0 { // no spread on either side: the difference is exact
		v.Kind, v.Lo, v.Hi = Beyond, v.Ratio, v.Ratio
		if d == 0 {
			v.Kind, v.Tell = Within, TellNever
		}
		return v
	}
	v.DF = welchDF(va, vb, a.N, b.N)
	v.T = d / math.Sqrt(va+vb)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: v.DF}
	v.P = 2 * t.Survival(math.Abs(v.T))
	tc := t.Quantile(1 - (1-conf)/2)
	v.Lo, v.Hi = fieller(a.Mean, b.Mean, va, vb, tc)
	v.Kind = Beyond
	if math.Abs(v.T) <= tc {
		v.Kind = Within
		v.Tell = tell(a, b, max(a.N, b.N), conf)
	}
	return v
}

// welchDF is the Welch–Satterthwaite degrees of freedom of the difference
// of two means whose squared standard errors are va and vb.
func welchDF(va, vb float64, na, nb int) float64 {
	return (va + vb) * (va + vb) / (va*va/float64(na-1) + vb*vb/float64(nb-1))
}

// fieller is the interval of mb/ma at the critical value tc: the ρ for
// which mb − ρ·ma is within tc of its standard error, √(vb + ρ²·va)
// (independent sides, no covariance), clipped at 0. At ρ = 1 that is
// Welch's test itself, so the interval holds 1 exactly when the test
// finds no difference.
func fieller(ma, mb, va, vb, tc float64) (lo, hi float64) {
	t2 := tc * tc
	qa := ma*ma - t2*va // ρ²'s coefficient of (mb − ρ ma)² − t²(vb + ρ² va)
	qb := -2 * ma * mb
	qc := mb*mb - t2*vb
	disc := qb*qb - 4*qa*qc
	switch {
	case qa == 0 && qb == 0: // a's mean is exactly 0, with no spread
		if qc <= 0 {
			return 0, math.Inf(1) // and b's within noise of 0: any ratio
		}
		return math.NaN(), math.NaN() // b's beyond it: no finite ratio
	case qa == 0:
		return math.Max(-qc/qb, 0), math.Inf(1)
	case qa < 0:
		// a's mean is within noise of 0: the set is unbounded above. With
		// both means ≥ 0 its roots' sum is ≤ 0, so its part at ρ ≥ 0 is
		// one interval, from the larger root (or 0) up.
		if disc <= 0 {
			return 0, math.Inf(1)
		}
		r := (-qb - math.Sqrt(disc)) / (2 * qa) // the larger root, qa < 0
		return math.Max(r, 0), math.Inf(1)
	}
	s := math.Sqrt(math.Max(disc, 0))
	return math.Max((-qb-s)/(2*qa), 0), (-qb + s) / (2 * qa)
}

// tell is the smallest number of measurements per side, from above n up
// to TellMax, at which Welch's test would find the observed difference of
// the means with the observed standard deviations; TellNever if none.
// Both the standard error and the critical t fall as k grows, so the test
// is monotone in k and a bisection finds it.
func tell(a, b Summary, n int, conf float64) int {
	d := math.Abs(b.Mean - a.Mean)
	sa2, sb2 := a.Stddev*a.Stddev, b.Stddev*b.Stddev
	tells := func(k int) bool {
		va, vb := sa2/float64(k), sb2/float64(k)
		tc := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: welchDF(va, vb, k, k)}.Quantile(1 - (1-conf)/2)
		return d > tc*math.Sqrt(va+vb)
	}
	lo, hi := max(n+1, 2), TellMax
	if d == 0 || !tells(hi) {
		return TellNever
	}
	for lo < hi {
		if mid := (lo + hi) / 2; tells(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
