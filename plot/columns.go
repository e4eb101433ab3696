package plot

import "math"

// Columns averages a side's figures over time into the columns of a chart
// spanning [t0, t0+span]: the one way both the explorer's live charts and
// a saved run's (runs compare, the SVG) turn interval samples into
// columns. A sample fills every column its interval touches, so
// consecutive samples draw a continuous line; a column no sample touches
// is a gap (NaN): the side was paused, off its turn or not started.
type Columns struct {
	t0, span, div float64
	sum           []float64
	cnt           []int
}

// NewColumns makes w columns over [t0, t0+span] whose values are divided
// by div (a unit).
func NewColumns(t0, span, div float64, w int) *Columns {
	return &Columns{t0: t0, span: span, div: div, sum: make([]float64, w), cnt: make([]int, w)}
}

// col is the column of time t, clamped to the chart.
func (c *Columns) col(t float64) int {
	return min(max(int(math.Floor((t-c.t0)/c.span*float64(len(c.sum)))), 0), len(c.sum)-1)
}

// Add counts v, measured over [from, to], in every column it touches.
func (c *Columns) Add(from, to, v float64) {
	for k := c.col(from); k <= c.col(to); k++ {
		c.sum[k] += v / c.div
		c.cnt[k]++
	}
}

// Means are the columns' averages, NaN where nothing was added.
func (c *Columns) Means() []float64 {
	for k := range c.sum {
		if c.cnt[k] == 0 {
			c.sum[k] = math.NaN()
		} else {
			c.sum[k] /= float64(c.cnt[k])
		}
	}
	return c.sum
}
