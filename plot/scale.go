package plot

import (
	"math"
	"strconv"

	"nbdscope/units"
)

// axis is a value axis: ticks from 0 to top in steps, in a unit. Values
// are divided by div before they are printed (rates in the unit that
// suits their largest value).
type axis struct {
	div  float64
	unit string
	step float64 // in the unit
	top  float64 // in the unit; a multiple of step
	dec  int     // decimals of the labels
}

// rateUnit picks the binary unit that suits a largest rate (units.RateUnit,
// as the explorer's charts).
func rateUnit(maxBps float64) (float64, string) { return units.RateUnit(maxBps) }

// unitOf is the axis unit of a metric.
func unitOf(m metric, mx float64) (float64, string) {
	switch m {
	case mThroughput:
		return rateUnit(mx)
	case mCalls:
		return 1, "calls/2MiB"
	case mFillFull, mFillEmpty:
		return 1, "%"
	}
	return 1, "cores"
}

// makeAxis fits about ticks steps over [0, mx] (mx in raw units).
//
// A share of time (the fill's full and empty) has a natural top: its
// axis runs 0 to 100% in quarters whatever the data, where a fitted one
// ran to 125% and drew a share that cannot exist.
func makeAxis(m metric, mx float64, ticks int) axis {
	if m == mFillFull || m == mFillEmpty {
		return axis{div: 1, unit: "%", step: 25, top: 100}
	}
	div, unit := unitOf(m, mx)
	return fitAxis(div, unit, mx, ticks)
}

// fitAxis fits about ticks steps over [0, mx], in unit (mx divided by div).
func fitAxis(div float64, unit string, mx float64, ticks int) axis {
	a := axis{div: div, unit: unit}
	v := mx / a.div
	if !(v > 0) || math.IsInf(v, 0) {
		v = 1
	}
	ticks = max(ticks, 1)
	a.step = niceStep(v / float64(ticks))
	// The top is the first tick above the largest value, so that a line
	// at its peak stays clear of the frame and the change labels.
	a.top = a.step * (math.Floor(v/a.step*(1+1e-9)) + 1)
	a.dec = decimals(a.step)
	return a
}

// label prints a tick value.
func (a axis) label(v float64) string {
	if math.Abs(v) < a.step/1000 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', a.dec, 64)
}

// steps is the number of tick steps from 0 to top (at least 1).
func (a axis) steps() int { return max(int(math.Round(a.top/a.step)), 1) }

// ticks returns the tick values, 0 to top.
func (a axis) ticks() []float64 {
	n := int(math.Round(a.top / a.step))
	out := make([]float64, 0, n+1)
	for i := 0; i <= n; i++ {
		out = append(out, float64(i)*a.step)
	}
	return out
}

// niceStep rounds x up to 1, 2, 2.5 or 5 × 10^k.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, n := range []float64{1, 2, 2.5, 5, 10} {
		if x/p <= n*(1+1e-9) {
			return n * p
		}
	}
	return 10 * p
}

// decimals is the number of decimals a multiple of step needs (at most 3).
func decimals(step float64) int {
	for d := 0; d < 3; d++ {
		v := step * math.Pow(10, float64(d))
		if math.Abs(v-math.Round(v)) < 1e-6*math.Max(1, v) {
			return d
		}
	}
	return 3
}

// timeStep picks seconds between time ticks so that at most maxTicks fit
// in end seconds.
func timeStep(end float64, maxTicks int) float64 {
	for _, s := range []float64{0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600} {
		if end/s <= float64(max(maxTicks, 1)) {
			return s
		}
	}
	return 7200
}

// secs prints a time tick: "5s", "1.5s".
func secs(t float64) string {
	return strconv.FormatFloat(t, 'f', -1, 64) + "s"
}
