package report

import (
	"math"
	"nbdscope/units"
	"slices"
	"strconv"

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
// noise of the fastest (one of the sizes tied with it: the verdict's Tied;
// empty when the verdict could not judge).
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
	if o := rep.Optimum; o != nil && o.Verdict.Kind != model.OptimumUnjudged {
		tied = strconv.FormatBool(slices.Contains(o.Verdict.Tied, r.Buffer))
	}
	return []string{cell(s.Mean), cell(s.Stddev), cell(s.Median), cell(s.Min), cell(s.Max), strconv.Itoa(s.N), tied}
}

// pct is a share as a percentage: "6.1%".
func pct(f model.Figure) string {
	if !f.Known() {
		return model.NA
	}
	return strconv.FormatFloat(float64(f)*100, 'f', 1, 64) + "%"
}
