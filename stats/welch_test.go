package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestWelchTextbook: Wikipedia's two examples of Welch's t-test ("Welch's
// t-test", Examples 1 and 2), whose published figures are t = 2.46 with
// ν ≈ 25.0, p = 0.021, and t = 1.57 with ν = 9.90, p = 0.149 (the signs
// here are b − a). The figures to more digits, and Fieller's interval of
// the ratio (the roots of (mb − ρ·ma)² = t²·(vb + ρ²·va) at t = t(0.975,
// ν)), were computed by hand in Python, with the t distribution
// integrated numerically (not gonum): 2.455356, 24.98853, 0.021378,
// [1.015840, 1.203685]; 1.565434, 9.904741, 0.148842, [0.971409,
// 1.199578].
func TestWelchTextbook(t *testing.T) {
	cases := []struct {
		a, b             []float64
		t, df, p, lo, hi float64
		kind             Kind
	}{
		{[]float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
			[]float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
			2.455356, 24.98853, 0.021378, 1.015840, 1.203685, Beyond},
		{[]float64{17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8},
			[]float64{21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8},
			1.565434, 9.904741, 0.148842, 0.971409, 1.199578, Within},
	}
	for i, c := range cases {
		v := Welch(Of(c.a), Of(c.b))
		if v.Kind != c.kind || !near(v.T, c.t, 1e-5) || !near(v.DF, c.df, 1e-4) || !near(v.P, c.p, 1e-5) ||
			!near(v.Lo, c.lo, 1e-5) || !near(v.Hi, c.hi, 1e-5) {
			t.Errorf("example %d: %+v, want t %v ν %v p %v [%v, %v] kind %v", i+1, v, c.t, c.df, c.p, c.lo, c.hi, c.kind)
		}
	}
}

// TestIntervalIsTheTest: the interval holds 1 exactly when the test finds
// no difference, for any two sets of measurements, so a ratio printed with
// its interval and its mark cannot disagree.
func TestIntervalIsTheTest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		gen := func(mean, sd float64) []float64 {
			xs := make([]float64, 2+r.IntN(6))
			for j := range xs {
				xs[j] = max(mean+sd*r.NormFloat64(), 0)
			}
			return xs
		}
		a := gen(1+r.Float64(), r.Float64())
		b := gen(1+r.Float64(), r.Float64())
		v := Welch(Of(a), Of(b))
		holds := v.Lo <= 1 && 1 <= v.Hi
		if !v.Known() || holds != (v.Kind == Within) || v.Lo > v.Ratio || v.Ratio > v.Hi {
			t.Fatalf("case %d: %v against %v: %+v", i, a, b, v)
		}
	}
}

// TestTooFewAndNoSpread: one measurement a side is no verdict; two sides
// without spread differ exactly or not at all; a denominator within noise
// of 0 has an interval unbounded above.
func TestTooFewAndNoSpread(t *testing.T) {
	if v := Welch(Of([]float64{1, 2}), Of([]float64{5})); v.Kind != TooFew || v.Known() || v.Tell != 0 || v.Ratio != 5/1.5 {
		t.Errorf("one measurement: %+v", v)
	}
	if v := Welch(Of(nil), Of([]float64{5, 6})); v.Kind != NoData {
		t.Errorf("none: %+v", v)
	}
	if v := Welch(Of([]float64{2, 2}), Of([]float64{3, 3, 3})); v.Kind != Beyond || v.Lo != 1.5 || v.Hi != 1.5 {
		t.Errorf("no spread, different: %+v", v)
	}
	if v := Welch(Of([]float64{2, 2}), Of([]float64{2, 2})); v.Kind != Within || v.Tell != TellNever {
		t.Errorf("no spread, equal: %+v", v)
	}
	// server send EAGAIN/2MiB: A 0.6 on average, mostly 0; B 0.0063.
	v := Welch(Of([]float64{0, 0, 2.4, 0}), Of([]float64{0.0063, 0, 0.0126, 0.0063}))
	if v.Kind != Within || v.Lo != 0 || !math.IsInf(v.Hi, 1) {
		t.Errorf("a denominator within noise of 0: %+v", v)
	}
}

// TestTell: 100 ± 10 against 110 ± 10, three measurements each, is within
// noise. By hand: with k a side the difference's standard error is
// √(200/k) and ν = 2(k − 1); at k = 8, t(0.975, 14) = 2.145 and 2.145·5 =
// 10.72 > 10; at k = 9, t(0.975, 16) = 2.120 and 2.120·4.714 = 9.993 < 10.
// So 9 measurements a side would tell them apart.
func TestTell(t *testing.T) {
	v := Welch(Of([]float64{90, 100, 110}), Of([]float64{100, 110, 120}))
	if v.Kind != Within || v.Tell != 9 {
		t.Fatalf("%+v, want within noise and 9 that would tell", v)
	}
	// The same means and spreads at 9 a side: beyond noise, at 8 not.
	nine := Welch(Summary{N: 9, Mean: 100, Stddev: 10}, Summary{N: 9, Mean: 110, Stddev: 10})
	eight := Welch(Summary{N: 8, Mean: 100, Stddev: 10}, Summary{N: 8, Mean: 110, Stddev: 10})
	if nine.Kind != Beyond || eight.Kind != Within || eight.Tell != 9 {
		t.Errorf("9 a side: %+v; 8 a side: %+v", nine, eight)
	}
	if v := Welch(Of([]float64{90, 100, 110}), Of([]float64{90, 100, 110})); v.Tell != TellNever {
		t.Errorf("equal means: %+v, want never", v)
	}
}
