package model

import (
	"testing"

	"nbdscope/stats"
)

// The gap verdict's rule: the effect is shown only where the calls fell
// by half or more beyond noise and the speed rose beyond noise; calls
// that fell within noise are "little", however far the ratio; too few
// turns is unjudged.
func TestGapKind(t *testing.T) {
	d := func(k stats.Kind, r float64) Difference { return Difference{stats.Verdict{Kind: k, Ratio: r}} }
	for _, c := range []struct {
		name         string
		calls, speed Difference
		want         GapKind
	}{
		{"the series' effect", d(stats.Beyond, 0.1), d(stats.Beyond, 2.2), GapShown},
		{"calls fell, time did not", d(stats.Beyond, 0.2), d(stats.Within, 1.1), GapCallsOnly},
		{"calls fell, slower", d(stats.Beyond, 0.2), d(stats.Beyond, 0.8), GapCallsOnly},
		{"calls fell by a quarter", d(stats.Beyond, 0.76), d(stats.Beyond, 1.5), GapLittle},
		{"calls within noise", d(stats.Within, 0.3), d(stats.Beyond, 1.5), GapLittle},
		{"one turn a side", d(stats.TooFew, 0.1), d(stats.TooFew, 2), GapUnjudged},
		{"no calls counted", d(stats.NoData, 0), d(stats.Beyond, 2), GapUnjudged},
	} {
		if got := gapKind(c.calls, c.speed); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if v := GapVerdictOf(Report{}); v.Kind != GapUnjudged {
		t.Errorf("no sides: %+v", v)
	}
}
