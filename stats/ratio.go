package stats

import (
	"fmt"
	"math"
)

// Spread is a ratio's spread as text: "±6%", "" when unknown.
func (v Verdict) Spread() string {
	if !v.Known || math.IsNaN(v.Noise) {
		return ""
	}
	return fmt.Sprintf("±%s%%", pct(v.Noise))
}

// Said is the verdict in words: "within noise (±6%)" when the difference
// lies within the spread (no winner named), else "+12% (beyond ±6%)";
// "" when there is no spread to judge by.
func (v Verdict) Said() string {
	switch {
	case !v.Known:
		return ""
	case v.Within:
		return "within noise (" + v.Spread() + ")"
	}
	sign := "+"
	if v.Diff < 0 {
		sign = "−"
	}
	return fmt.Sprintf("%s%s%% (beyond the noise, %s)", sign, pct(math.Abs(v.Diff)), v.Spread())
}

// RatioSpread is the spread of the ratio b/a as text ("±6%"): the two
// relative σ added, as a ratio's relative error adds; "" when unknown.
func RatioSpread(a, b Summary) string {
	r := a.RelStddev() + b.RelStddev()
	if math.IsNaN(r) {
		return ""
	}
	return "±" + pct(r) + "%"
}

// pct is a share as a percentage with the digits it deserves.
func pct(x float64) string {
	p := 100 * x
	if p < 10 {
		return fmt.Sprintf("%.1f", p)
	}
	return fmt.Sprintf("%.0f", p)
}
