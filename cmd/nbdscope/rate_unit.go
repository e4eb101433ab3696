package main

import (
	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/segtable"
	"nbdscope/units"
)

// shownRate is the unit of every rate run and sweep print (--rate-unit);
// nil: each output's own, the unit that fits for run ("2.31 GiB/s") and
// GiB/s for a sweep's table. It is the one setting of how the outputs
// look that is not passed down to them: it reaches every rate of the
// tables, bars, lines and progress, and a process runs one command;
// execute resets it so that one command line's choice never leaks into
// the next (tests run many in one process).
var shownRate *units.RateScale

// addRateUnitFlag adds --rate-unit to cmd.
func addRateUnitFlag(cmd *cobra.Command) *string {
	return cmd.Flags().String("rate-unit", "", "show rates in `UNIT`: gib, gbit, mib or mbit (iperf3's -f; JSON and CSV stay bytes per second)")
}

// setRateUnit applies --rate-unit (bad usage for an unknown unit, or
// an empty one typed).
func setRateUnit(name string, given bool) error {
	shownRate = nil
	if name == "" && !given {
		return nil
	}
	u, err := units.ParseRateScale(name)
	if err != nil {
		return usageErrorf("--rate-unit: %v", err)
	}
	shownRate = &u
	return nil
}

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
	return (f / model.GiB).Fixed(2)
}

// rate is a rate with its unit: "2.31 GiB/s", or in --rate-unit's.
func rate(f model.Figure) string {
	if shownRate != nil && f.Known() {
		return shownRate.Format(float64(f))
	}
	return f.Rate()
}

// segmentRates writes the throughput column of a segments table in
// --rate-unit's unit (segtable prints the unit that fits). Its rows are
// the sides' segments in order, as segtable.Of lays them out.
func segmentRates(t *segtable.Table, rep model.Report) {
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
