package report

import (
	"fmt"
	"math"
	"nbdscope/units"
	"slices"
	"strconv"
	"strings"

	"nbdscope/model"
	"nbdscope/stats"
)

// The sweep's statistics as hyperfine prints them: each row's time as
// mean ± σ and min … max over its measurements (the table's time column
// is the median measurement's), in the table, the CSV and the JSON
// (time_s); and whether the optimum's lead is larger than the noise.

// timeSpreadHead and timeSpreadRule are the table's spread columns.
const (
	timeSpreadHead = " time mean ± σ | time min … max |"
	timeSpreadRule = "---:|---:|"
)

// execSpreadHead and execSpreadRule are an exec table's spread column:
// its time column already has min–max.
const (
	execSpreadHead = " time mean ± σ |"
	execSpreadRule = "---:|"
)

// timeSpread is "0.292s ± 0.004s", the mean ± σ of a row's times ("±
// n/a" with one measurement; n/a for a sweep saved without them).
func timeSpread(r model.SweepRow) string {
	s := r.TimeS
	if s == nil || s.N == 0 {
		return model.NA
	}
	return seconds(s.Mean) + " ± " + seconds(s.Stddev)
}

// timeRange is "0.288s … 0.297s".
func timeRange(r model.SweepRow) string {
	s := r.TimeS
	if s == nil || s.N == 0 {
		return model.NA
	}
	return seconds(s.Min) + " … " + seconds(s.Max)
}

// timeSpreadCells are a row's spread cells, for the table.
func timeSpreadCells(r model.SweepRow) string {
	return " " + timeSpread(r) + " | " + timeRange(r) + " |"
}

func seconds(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return model.NA
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + "s"
}

// timeStatsCSVHeader are the CSV's statistics columns, after all the
// others: the summary of the row's times, and whether the row is within
// noise of the optimum (one of the sizes tied with it).
var timeStatsCSVHeader = []string{"time_mean_s", "time_stddev_s", "time_median_s", "time_min_s", "time_max_s", "time_n", "within_noise_of_optimum"}

// timeStatsCSVCells are a row's statistics cells; unknown figures are
// empty, as everywhere in the CSV.
func timeStatsCSVCells(rep model.SweepReport, r model.SweepRow) []string {
	s := stats.Summary{Mean: math.NaN(), Stddev: math.NaN(), Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if r.TimeS != nil {
		s = *r.TimeS
	}
	cell := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return units.CSVNumber(v)
	}
	tied := ""
	if o := rep.Optimum; o != nil && o.Noise != nil && o.Noise.Known {
		tied = strconv.FormatBool(slices.Contains(o.Noise.Tied, r.Buffer))
	}
	return []string{cell(s.Mean), cell(s.Stddev), cell(s.Median), cell(s.Min), cell(s.Max), strconv.Itoa(s.N), tied}
}

// noiseTied is the optimum line when the fastest sizes are within noise
// of each other: no size is named the winner.
func noiseTied(o *model.SweepOptimum, vs string) string {
	n := o.Noise
	if slices.Contains(n.Tied, model.BufDefaultName) {
		vs = ", the default among them" // not "times faster" than a size it ties with
	}
	return fmt.Sprintf("optimal: none clear — %s are within noise (±%s) of each other (up to %s %s%s); within %d%%: %s",
		strings.Join(n.Tied, ", "), pct(n.Noise), rateNumber(o.ThroughputBps), rateName(), vs,
		int(model.OptimumTolerance*100), strings.Join(o.Within5Pct, ", "))
}

// noiseLead is what the optimum line adds when the optimum's lead is
// larger than the noise: "; 6.1% ahead of 2m, beyond the noise (±2.3%)".
func noiseLead(o *model.SweepOptimum) string {
	n := o.Noise
	if n == nil || !n.Known || n.Within {
		return ""
	}
	return fmt.Sprintf("; %s ahead of %s, beyond the noise (±%s)", pct(n.Lead), n.RunnerUp, pct(n.Noise))
}

// pct is a share as a percentage: "6.1%".
func pct(f model.Figure) string {
	if !f.Known() {
		return model.NA
	}
	return strconv.FormatFloat(float64(f)*100, 'f', 1, 64) + "%"
}
