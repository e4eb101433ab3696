package report

import (
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
)

// sweepFillLine is the send-buffer fill at each size of a sweep, full/empty
// percent of the time ("fill (full/empty %): 8k 61/37, 2m 0/87"). When
// no row measured it, an exec sweep says why (its runs' reason); "" for a
// sweep of ours saved before fill was sampled.
func sweepFillLine(rows []model.SweepRow) string {
	var parts []string
	any, few := false, false
	for _, r := range rows {
		fl := r.Figures.Fill()
		any = any || fl.Known()
		part := r.Buffer + " " + FillCell(fl)
		if fl.TooFew() { // a measurement of milliseconds: a share of a handful
			part += " (" + countOf(fl.Samples, "sample") + ")"
			few = true
		}
		parts = append(parts, part)
	}
	if !any {
		if why := execFillNA(rows); why != "" {
			return "send-buffer fill n/a: " + why
		}
		return ""
	}
	line := "send-buffer fill (full/empty % of the time" + execFillSource(rows) + "): " + strings.Join(parts, ", ")
	if few {
		line += "; a share of so few samples says little: give a larger --bytes"
	}
	return line
}

// execFillNA is why an exec sweep's runs have no fill: the first reason
// its runs give, "" when none does.
func execFillNA(rows []model.SweepRow) string {
	return reasonText(firstOfRuns(rows, func(run model.ExecRun) *model.Reason { return run.FillNA }))
}

// execFillSource is what measured an exec sweep's runs' fill, as the
// fill line's words (", measured in the kernel"), "" when no run says or
// they differ (then each run's JSON says).
func execFillSource(rows []model.SweepRow) string {
	src := ""
	for _, r := range rows {
		if r.Exec == nil {
			continue
		}
		for _, run := range r.Exec.Runs {
			switch {
			case run.FillSource == "":
			case src == "":
				src = run.FillSource
			case src != run.FillSource:
				return ", some measured in the kernel, some sampled"
			}
		}
	}
	if w := phrase.FillSourceLong(src); w != "" {
		return ", " + w
	}
	return ""
}
