package phrase

import (
	"fmt"
	"strings"

	"nbdscope/model"
	"nbdscope/stats"
)

// The words of a sweep's optimum verdict (model.OptimumVerdict), the same
// in sweep's table and optimum line, runs list, runs show and the SVG.

// OptimumUnjudgedWhy is why an unjudged optimum is not judged, and what
// would.
const OptimumUnjudgedWhy = "with fewer than 2 measurements of a size kept there is no spread to judge noise by (--repeat 2 or more judges)"

// OptimumRepeats is how many repeats would tell: "9 repeats per size would
// tell", or that no number up to stats.TellMax would.
func OptimumRepeats(v model.OptimumVerdict) string {
	if v.Repeats == stats.TellNever {
		return fmt.Sprintf("no number of repeats up to %d would tell them apart at these differences", stats.TellMax)
	}
	return fmt.Sprintf("about %d repeats per size would tell", v.Repeats)
}

// OptimumSaid is the optimum verdict in words, the same in every output:
// "none clear — 512k, 1m, 2m are within noise of each other (512k/1m
// 1.04x ≈ [0.93–1.16]); about 9 repeats per size would tell", "512k,
// 1.12x [1.05–1.20] the next fastest (1m), beyond noise", "not judged —
// 512k is the fastest; with fewer than 2 measurements …".
func OptimumSaid(o *model.SweepOptimum) string {
	if o == nil {
		return "n/a (no size moved any payload)"
	}
	v := o.Verdict
	switch v.Kind {
	case model.OptimumNoneClear:
		return fmt.Sprintf("none clear — %s are within noise of each other (%s/%s %s); %s",
			strings.Join(v.Tied, ", "), o.Buffer, v.RunnerUp, v.Lead.Cell(), OptimumRepeats(v))
	case model.OptimumUnjudged:
		return "not judged — " + o.Buffer + " is the fastest; " + OptimumUnjudgedWhy
	}
	if v.RunnerUp == "" {
		return o.Buffer + " (the only size that moved payload)"
	}
	return fmt.Sprintf("%s, %s the next fastest (%s), beyond noise", o.Buffer, v.Lead.Cell(), v.RunnerUp)
}

// OptimumShort is the optimum verdict in a few words, for a list: "optimum 512k (1.49x
// [1.21–1.80] the default)", "optimum none clear (about 9 repeats per size
// would tell)", "fastest 512k (not judged: 1 repeat)".
func OptimumShort(o *model.SweepOptimum) string {
	if o == nil {
		return "optimum n/a"
	}
	switch v := o.Verdict; v.Kind {
	case model.OptimumNoneClear:
		if v.Repeats == stats.TellNever {
			return "optimum none clear (within noise)"
		}
		return fmt.Sprintf("optimum none clear (%d repeats would tell)", v.Repeats)
	case model.OptimumUnjudged:
		return "fastest " + o.Buffer + " (not judged: 1 repeat)"
	}
	if d := o.Verdict.VsDefault; d.Kind != stats.NoData {
		return "optimum " + o.Buffer + " (" + d.Cell() + " the default)"
	}
	return "optimum " + o.Buffer
}
