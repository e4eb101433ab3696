package report

import (
	"nbdscope/model"
	"nbdscope/units"
)

// shownRate is the unit of every rate run and sweep print (--rate-unit,
// SetRateUnit); nil: each output's own, the unit that fits for run
// ("2.31 GiB/s") and GiB/s for a sweep's table. It is the one setting of
// how the outputs look that is not passed down to them: it reaches every
// rate of the tables, bars, lines and progress, and a process runs one
// command; the command line resets it so that one command line's choice
// never leaks into the next (tests run many in one process).
var shownRate *units.RateScale

// SetRateUnit sets the unit every rate is shown in; nil: each output's own.
func SetRateUnit(u *units.RateScale) { shownRate = u }

// RateName is the unit of the sweep's rate columns ("GiB/s").
func RateName() string { return rateName() }

// RateNumber is a rate in the sweep's unit, without the unit ("3.42").
func RateNumber(f model.Figure) string { return rateNumber(f) }

// Rate is a rate with its unit: "2.31 GiB/s", or in --rate-unit's.
func Rate(f model.Figure) string { return rate(f) }

// rateName is the unit of the sweep's rate columns ("GiB/s").
func rateName() string {
	if shownRate != nil {
		return shownRate.Name
	}
	return "GiB/s"
}

// rateNumber is a rate in the sweep's unit, without the unit ("3.42").
func rateNumber(f model.Figure) string {
	if !f.Known() {
		return model.NA
	}
	if shownRate != nil {
		return shownRate.Number(float64(f))
	}
	return gibNumber(float64(f / model.GiB))
}

// gibNumber is a rate in GiB/s as the sweep's columns align it, with two
// decimals; a rate above 0 that two decimals would print as 0.00 (a
// client that moved a few KiB) has three significant digits ("0.000477"),
// so that it never reads as nothing moved.
func gibNumber(v float64) string {
	if v > 0 && v < 0.005 {
		return units.ThreeSig(v)
	}
	return units.Fixed(v, 2)
}

// rate is a rate with its unit: "2.31 GiB/s", or in --rate-unit's.
func rate(f model.Figure) string {
	if shownRate != nil && f.Known() {
		return shownRate.Format(float64(f))
	}
	return f.Rate()
}

// segmentRates writes the throughput column of a segments table in
// --rate-unit's unit (the table prints the unit that fits). Its rows are
// the sides' segments in order, as Segments lays them out.
func segmentRates(t *SegmentTable, rep model.Report) {
	col := -1
	for i, h := range t.Head {
		if h == "throughput" {
			col = i
		}
	}
	if shownRate == nil || col < 0 {
		return
	}
	i := 0
	for _, s := range rep.Sides {
		for _, g := range s.Segments {
			if i < len(t.Rows) && col < len(t.Rows[i]) {
				t.Rows[i][col] = rate(g.ThroughputBps)
			}
			i++
		}
	}
}
