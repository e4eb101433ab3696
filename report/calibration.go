package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

// WriteCalibration prints a calibration: what ran, then per buffer three
// lines, ours, the real client's and ours / real.
func WriteCalibration(w io.Writer, rep model.CalibrationReport) {
	sd := rep.Config.Sides[0]
	real := "the real client"
	// The program's name, for the table (report reaches no runtime, so
	// not clientrun's quoting rules: a name is its first word).
	if f := strings.Fields(rep.Client); len(f) > 0 {
		real = strings.Trim(f[0], `'"`)
	}
	conns := "1 connection"
	if sd.Connections != 1 {
		conns = fmt.Sprintf("%d connections", sd.Connections)
	}
	fmt.Fprintf(w, "Our load (%s, %s requests, %d in flight, consume %s, reader %s) and `%s`, each reading %s from %s at each server send buffer; each client's median run by time, of %s.\n",
		conns, units.FormatSize(int64(sd.RequestSize)), sd.InFlight, consumeName(sd), sd.Get(model.SetReader), rep.Client,
		units.FormatSize(rep.Bytes), execServerName(sd), repeatsTaken(rep))
	fmt.Fprintln(w, "Calls and EAGAIN are the client's receive calls; wake-ups are its voluntary + involuntary context switches; CPU is user + system of the client and all it started.")
	for _, r := range rep.Rows {
		if r.CallsNA != nil {
			fmt.Fprintf(w, "%s's socket calls are n/a: %s.\n", real, phrase.ReasonLong(*r.CallsNA))
			break
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| buffer | client | recv calls per 2 MiB | recv EAGAIN per 2 MiB | wake-ups per 2 MiB | CPU ms per 2 MiB | "+rateName()+" |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, r := range rep.Rows {
		buf := r.Buffer
		if r.Effective > 0 {
			buf += " (" + units.FormatSize(int64(r.Effective)) + ")"
		}
		for _, c := range []struct {
			name string
			f    model.ClientFigures
		}{{"nbdscope's load", r.Ours}, {real, r.Real}} {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", buf, c.name, c.f.RecvCallsPer2MiB.Fixed(2),
				c.f.RecvEAGAINPer2MiB.Fixed(2), c.f.WakeupsPer2MiB.Fixed(2), c.f.CPUMsPer2MiB.Fixed(2), rateNumber(c.f.ThroughputBps))
		}
		x := r.Ratio
		fmt.Fprintf(w, "| %s | ours / %s | %s | %s | %s | %s | %s |\n", buf, real, x.RecvCallsPer2MiB.Ratio(),
			x.RecvEAGAINPer2MiB.Ratio(), x.WakeupsPer2MiB.Ratio(), x.CPUMsPer2MiB.Ratio(), x.ThroughputBps.Ratio())
	}
	// Other processes slow the two clients unevenly: a ratio taken
	// while they ran says so, as a sweep's rows do.
	other := make([]model.SweepRow, len(rep.Rows))
	for i, r := range rep.Rows {
		other[i] = model.SweepRow{Buffer: r.Buffer, OtherCoresBusy: r.OtherCoresBusy}
	}
	if line := otherCPULine(other); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, agreementLine(rep, real))
	if rep.Partial {
		fmt.Fprintf(w, "\nPARTIAL CALIBRATION: %s\n", rep.PartialReason)
	}
}

// consumeName is what the load does with READ data.
func consumeName(sd model.SideConfig) string {
	if sd.Consume == "" {
		return "default"
	}
	return string(sd.Consume)
}

// repeatsTaken says how many repeats each buffer took: "3 repeats",
// or "20 repeats at default, 30 at 2m (judged every 10, at most 50)".
func repeatsTaken(rep model.CalibrationReport) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 repeat"
		}
		return fmt.Sprintf("%d repeats", n)
	}
	var each []string
	same := true
	for i, r := range rep.Rows {
		n := max(r.Ours.Repeats, r.Real.Repeats)
		if i > 0 && n != max(rep.Rows[0].Ours.Repeats, rep.Rows[0].Real.Repeats) {
			same = false
		}
		at := fmt.Sprint(n)
		if i == 0 {
			at = plural(n)
		}
		each = append(each, at+" at "+r.Buffer)
	}
	s := plural(rep.Repeat)
	switch {
	case len(rep.Rows) > 0 && same:
		s = plural(max(rep.Rows[0].Ours.Repeats, rep.Rows[0].Real.Repeats))
	case len(rep.Rows) > 0:
		s = strings.Join(each, ", ")
	}
	if rep.Looks.Looks() > 1 {
		s += fmt.Sprintf(" (judged every %d, at most %d)", rep.Looks.Every, rep.Looks.Most)
	}
	if rep.OutOfTime {
		s += fmt.Sprintf("; stopped undecided when its %s were up (--repeat N takes N, however long)", budgetWords(rep.Looks.BudgetS))
	}
	return s
}

// agreementLine says at which buffers our load's receive calls per 2 MiB
// are within the band of the real client's (model.AgreeLow…AgreeHigh), by
// the ratio's interval over the repeats (model.CalibrationRow.Agreement):
// 95%, or each look's level when the calibration looked several times.
func agreementLine(rep model.CalibrationReport, real string) string {
	level := "the ratio's 95% interval over the repeats"
	if n := rep.Looks.Looks(); n > 1 {
		level = fmt.Sprintf("the ratio's interval over the repeats, at %.1f%% at each of up to %d looks, so that together they hold it at 95%%",
			100*rep.Confidence, n)
	}
	line := fmt.Sprintf("Agreement, receive calls per 2 MiB ours / %s within %.2f–%.2fx (%s):", real, model.AgreeLow, model.AgreeHigh, level)
	return line + " " + LookLine(rep.Rows) + "."
}

// LookLine is what a look found at each buffer: "within at default
// 1.02x ≈ [0.91–1.14]; undecided at 2m 1.12x ≈ [0.80–1.52] (the interval
// crosses the band's edge: …)".
func LookLine(rows []model.CalibrationRow) string {
	var in, out, und, na []string
	for _, r := range rows {
		at := r.Buffer + " " + r.Ratio.RecvCallsPer2MiB.Ratio()
		if iv := r.RecvCalls.Interval(); iv != "" {
			at = r.Buffer + " " + r.RecvCalls.Cell()
		}
		switch r.Agreement() {
		case model.AgreeNA:
			na = append(na, r.Buffer)
		case model.AgreeWithin:
			in = append(in, at)
		case model.AgreeOutside:
			out = append(out, at)
		default:
			und = append(und, at)
		}
	}
	var parts []string
	if len(in) > 0 {
		parts = append(parts, "within at "+strings.Join(in, ", "))
	}
	if len(out) > 0 {
		parts = append(parts, "OUTSIDE at "+strings.Join(out, ", "))
	}
	if len(und) > 0 {
		parts = append(parts, "undecided at "+strings.Join(und, ", ")+" (the interval crosses the band's edge: the runs swing too far to say; more repeats narrow it)")
	}
	if len(na) > 0 {
		parts = append(parts, "n/a at "+strings.Join(na, ", ")+" (the real client's calls were not counted)")
	}
	return strings.Join(parts, "; ")
}

// budgetWords is a time budget in words: "5 minutes", "90 s".
func budgetWords(sec float64) string {
	if sec >= 60 && math.Mod(sec, 60) == 0 {
		if sec == 60 {
			return "1 minute"
		}
		return fmt.Sprintf("%g minutes", sec/60)
	}
	return fmt.Sprintf("%g s", sec)
}
