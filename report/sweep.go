package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/stats"
	"nbdscope/units"
)

// The sweep's outputs, all from one model.SweepReport: the seed's table
// (markdown), a bar per size, the optimum line, and CSV.

// sweepSetting names what was swept, for captions.
func sweepSetting(spec model.SweepSpec) string {
	switch spec.Setting {
	case model.SetClientSndBuf:
		return "client send buffer"
	case model.SetClientRcvBuf:
		return "client receive buffer"
	case model.SetServerRcvBuf:
		return "server receive buffer"
	}
	return "server send buffer"
}

// sweptSizes are the sizes actually swept (the rows), in order.
func sweptSizes(rows []model.SweepRow) string {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Buffer
	}
	return strings.Join(names, ", ")
}

// rowBuffer is a row's buffer and its effective size: "2m (4m)".
func rowBuffer(r model.SweepRow) string { return withEffective(r.Buffer, r.Effective, "") }

func secs(f model.Figure) string {
	if !f.Known() {
		return model.NA
	}
	return f.Fixed(3) + "s"
}

// SweepMarkdown prints the seed's table shape, one row per size, then
// the optimum line (sweep --markdown).
func SweepMarkdown(w io.Writer, rep model.SweepReport) {
	sweepTable(w, rep)
	fmt.Fprintln(w)
	sweepEnd(w, rep)
}

// SweepText is sweep's default output: the table, a bar per size,
// then the optimum line.
func SweepText(w io.Writer, rep model.SweepReport, width int) {
	sweepTable(w, rep)
	fmt.Fprintln(w)
	sweepBars(w, rep, width)
	fmt.Fprintln(w)
	sweepEnd(w, rep)
}

// sweepEnd prints the optimum line and what set the pace there, and
// says when the sweep is partial.
func sweepEnd(w io.Writer, rep model.SweepReport) {
	fmt.Fprintln(w, OptimumLine(rep.Optimum))
	if e := rep.MacOS; e != nil {
		fmt.Fprintf(w, "▲ %s\n", phrase.MacOSEmulation(*e))
	}
	if l := seedOptimumLine(rep); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := execPayloadLine(rep); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := sweepFillLine(rep.Rows); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := paceLine(rep); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := otherCPULine(rep.Rows); l != "" {
		fmt.Fprintln(w, l)
	}
	if rep.Partial {
		fmt.Fprintf(w, "PARTIAL SWEEP: %s\n", rep.PartialReason)
	}
}

// sweepTable prints the seed's table shape, one row per size.
func sweepTable(w io.Writer, rep model.SweepReport) {
	if rep.Spec.Exec != nil {
		execTable(w, rep)
		seedRows(w, rep)
		return
	}
	where := ""
	if len(rep.Rows) > 0 && rep.Rows[0].Placement.Setting != "" {
		pl := rep.Rows[0].Placement
		where = fmt.Sprintf("; placement %s (client on cpu %s, server on cpu %s)", pl.Setting, pl.LoadCPUs, pl.ServerCPUs)
	}
	sd := rep.Config.Sides[0]
	median, perRow := medianOf(rep, "measurements")
	fmt.Fprintf(w, "Moving %s per measurement (%s workload) for each %s, %s%s.\n\n",
		units.FormatBytes(float64(rep.Spec.Bytes)), sd.Workload, sweepSetting(rep.Spec), median, where)
	fmt.Fprintln(w, "| buffer size | time | client user | client system | server user | server system | calls per 2 MiB | EAGAIN per 2 MiB | "+waitHead+" | "+rateName()+" |"+
		timeSpreadHead+measuredHead(perRow))
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"+timeSpreadRule+measuredRule(perRow))
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "| %s | %.3fs | %.3fs | %.3fs | %s | %s | %s | %s | %s | %s |%s%s\n", rowBuffer(r), r.Seconds, r.ClientUserS, r.ClientSysS,
			secs(r.ServerUserS), secs(r.ServerSysS), r.RecvPer2MiB.Fixed(1), r.EAGAINPer2MiB.Fixed(1), waitCell(r.Figures),
			rateNumber(r.ThroughputBps), timeSpreadCells(r), measuredCell(perRow, r, rep.Spec.Repeat))
	}
}

// waitHead is the column of each process's wait on a run queue for a
// CPU, in cores (model.Process.CoresWaiting): a row whose processes
// waited for a core measured the machine's contention as much as the
// buffer.
const waitHead = "CPU wait client/server"

// waitCell is a row's waitHead cell: "0.02/0.31", n/a where not measured.
func waitCell(f model.Figures) string {
	srv := model.Unknown
	if f.Server != nil {
		srv = f.Server.CoresWaiting
	}
	return f.Client.CoresWaiting.Fixed(2) + "/" + srv.Fixed(2)
}

// medianOf says what each row is the median of: "median of 3" when every
// row had the sweep's --repeat measurements, "median of 2 (3 asked)" when
// a sweep cut short left every row with the same fewer. When the rows
// differ no one count is true of them all: the words say so, and perRow
// asks for a measured column with each row's count ("1 of 3"). what is
// "measurements" or "runs".
func medianOf(rep model.SweepReport, what string) (words string, perRow bool) {
	asked := rep.Spec.Repeat
	if len(rep.Rows) == 0 {
		return fmt.Sprintf("median of %d", asked), false
	}
	n := rep.Rows[0].Repeats
	for _, r := range rep.Rows {
		if r.Repeats != n {
			return fmt.Sprintf("median of the %s each row had, of %d asked (the measured column)", what, asked), true
		}
	}
	if n != asked {
		return fmt.Sprintf("median of %d (%d asked)", n, asked), false
	}
	return fmt.Sprintf("median of %d", asked), false
}

// measuredHead, measuredRule and measuredCell are the measured column of
// a table whose rows differ in their count (medianOf), or nothing.
func measuredHead(perRow bool) string { return ifPerRow(perRow, " measured |") }
func measuredRule(perRow bool) string { return ifPerRow(perRow, "---:|") }
func measuredCell(perRow bool, r model.SweepRow, of int) string {
	return ifPerRow(perRow, fmt.Sprintf(" %d of %d |", r.Repeats, of))
}

func ifPerRow(perRow bool, s string) string {
	if perRow {
		return s
	}
	return ""
}

// OptimumLine is the seed's "optimal: 2m (12.6 times faster than
// default)", with the optimum's GiB/s, for a sweep of our load and of a
// real client alike, from the optimum's verdict (model.OptimumVerdict, the
// one every output reads): "optimal: 1m (3.42 GiB/s, 2.40x [2.21–2.61]
// the default's); within 5%: 1m, 2m, 4m; 1.06x [1.03–1.09] the next
// fastest (2m), beyond noise", or "optimal: none clear — …" naming no
// size, with how many repeats would tell.
func OptimumLine(o *model.SweepOptimum) string {
	if o == nil {
		return "optimal: " + phrase.OptimumSaid(o)
	}
	within := fmt.Sprintf("within %d%%: %s", int(model.OptimumTolerance*100), strings.Join(o.Within5Pct, ", "))
	v := o.Verdict
	switch v.Kind {
	case model.OptimumNoneClear:
		return fmt.Sprintf("optimal: %s (the highest mean, %s's, %s %s); %s", phrase.OptimumSaid(o), o.Buffer, rateNumber(v.MeanBps), rateName(), within)
	case model.OptimumUnjudged:
		return fmt.Sprintf("optimal: not judged — %s is the fastest (%s %s%s); %s; %s", o.Buffer, rateNumber(o.ThroughputBps), rateName(), vsDefault(o),
			within, phrase.OptimumUnjudgedWhy)
	}
	lead := ""
	if v.RunnerUp != "" {
		lead = fmt.Sprintf("; %s the next fastest (%s), beyond noise", v.Lead.Cell(), v.RunnerUp)
	}
	return fmt.Sprintf("optimal: %s (%s %s%s); %s%s", o.Buffer, rateNumber(o.ThroughputBps), rateName(), vsDefault(o), within, lead)
}

// vsDefault is the optimum against the default, with its interval: ",
// 2.40x [2.21–2.61] the default's" (the means of their measurements).
func vsDefault(o *model.SweepOptimum) string {
	switch d := o.Verdict.VsDefault; {
	case o.Buffer == model.BufDefaultName:
		return ", the default"
	case d.Kind == stats.NoData:
		return "; the default was not swept"
	default:
		return ", " + d.Cell() + " the default's"
	}
}

// barEighths draws a bar to an eighth of a cell.
var barEighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// sweepBars draws one horizontal bar per size, scaled so the fastest
// fills the width, labelled with its GiB/s; the caption names the sizes
// swept.
func sweepBars(w io.Writer, rep model.SweepReport, width int) {
	label, value := 0, 0
	var top float64
	for _, r := range rep.Rows {
		label = max(label, len([]rune(rowBuffer(r))))
		value = max(value, len(rateNumber(r.ThroughputBps)))
		if r.ThroughputBps.Known() {
			top = max(top, float64(r.ThroughputBps))
		}
	}
	room := max(width-label-value-4, 10)
	fmt.Fprintf(w, rateName()+" by %s (swept: %s)\n", sweepSetting(rep.Spec), sweptSizes(rep.Rows))
	for _, r := range rep.Rows {
		bar := ""
		if r.ThroughputBps.Known() && top > 0 {
			eighths := int(float64(r.ThroughputBps)/top*float64(room*8) + 0.5)
			bar = strings.Repeat("█", eighths/8) + barEighths[eighths%8]
		}
		cell := rowBuffer(r)
		pad := label - len([]rune(cell))
		fmt.Fprintf(w, "  %s%s %s%s %s\n", cell, strings.Repeat(" ", pad), bar,
			strings.Repeat(" ", room-len([]rune(bar))), rateNumber(r.ThroughputBps))
	}
}

// SweepCSV writes a row per size: the buffer, the time to move the
// sweep's bytes, then engine's figure columns (the same as run --csv) of
// the median measurement, then the optimum in every row's optimal,
// within_5pct and x_default columns.
func SweepCSV(w io.Writer, rep model.SweepReport) error {
	o := rep.Optimum
	var def model.Figure = model.Unknown
	for _, r := range rep.Rows {
		if r.Buffer == model.BufDefaultName {
			def = r.ThroughputBps
		}
	}
	rows := make([]model.CSVRow, len(rep.Rows))
	for i := range rep.Rows {
		r := &rep.Rows[i]
		optimal, within := false, false
		if o != nil {
			optimal = r.Buffer == o.Named()
			within = slices.Contains(o.Within5Pct, r.Buffer)
		}
		xdef := ""
		if def.Known() && def > 0 && r.ThroughputBps.Known() {
			xdef = strconv.FormatFloat(float64(r.ThroughputBps/def), 'f', 3, 64)
		}
		rows[i] = model.CSVRow{
			Lead:    []string{r.Buffer, strconv.Itoa(r.Effective), strconv.Itoa(r.Repeats), ff(r.Seconds)},
			Figures: &r.Figures,
			Trail:   []string{strconv.FormatBool(optimal), strconv.FormatBool(within), xdef, strconv.FormatBool(rep.Partial)},
		}
		if rep.Spec.Exec != nil {
			rows[i].Trail = append(rows[i].Trail, execCSVCells(rep, *r)...)
		}
		rows[i].Trail = append(rows[i].Trail, timeStatsCSVCells(rep, *r)...)
		rows[i].Trail = append(rows[i].Trail, macOSCSVCells(rep.MacOS, *r)...)
	}
	trail := []string{"optimal", "within_5pct", "x_default", "partial"}
	if rep.Spec.Exec != nil {
		trail = append(trail, execCSVHeader...)
	}
	trail = append(trail, timeStatsCSVHeader...)
	trail = append(trail, "macos_emulation", "macos_series_speedup")
	return model.WriteFiguresCSV(w, []string{"buffer", "effective", "repeats", "time_s"}, trail, rows)
}

func ff(v float64) string { return units.Fixed(v, 3) }

// macOSCSVCells are a row's macos_emulation and macos_series_speedup
// cells, as a run's CSV has them: the kernel the macos row ran on instead
// of XNU and the series' B/A from a real Mac; empty on any other row.
func macOSCSVCells(e *model.MacOSEmulation, r model.SweepRow) []string {
	if e == nil || r.Buffer != (model.Buf{Kind: model.BufMacOS}).String() {
		return []string{"", ""}
	}
	x := ""
	if e.SeriesSpeedup > 0 {
		x = units.CSVNumber(e.SeriesSpeedup)
	}
	return []string{e.Kernel, x}
}

// paceLine says what set the pace at the optimum, and how busy the same
// process was at the default, so a ratio smaller than the seed's explains
// itself: "pace: at 2m the client used all of its 1 core (0.98 cores busy;
// 0.86 at default): its own work, not waiting, sets the pace here". ""
// when there is no optimum or no CPU figure.
func paceLine(rep model.SweepReport) string {
	o := rep.Optimum
	if o == nil {
		return ""
	}
	var best, def *model.SweepRow
	for i := range rep.Rows {
		switch rep.Rows[i].Buffer {
		case o.Buffer:
			best = &rep.Rows[i]
		case model.BufDefaultName:
			def = &rep.Rows[i]
		}
	}
	// From the row, not o.Pace: a sweep saved before the pace was kept
	// has rows with their CPU figures and an optimum without one.
	if best == nil {
		return ""
	}
	p := best.Pace()
	if !p.Client.Known() {
		return ""
	}
	if o := best.OtherCoresBusy; o != nil && *o >= model.OtherCoresNoisy {
		return fmt.Sprintf("pace: at %s not judged — other processes kept %s cores busy during its measurements, slowing them", best.Buffer, o.Fixed(2))
	}
	var atDefault *model.Pace
	if def != nil {
		dp := def.Pace()
		atDefault = &dp
	}
	faults := best.Figures.Client.FaultsPer2MiB
	if execPayloadLine(rep) != "" {
		// A client that moved a sliver of the export: its faults are
		// its start-up's, not buffers faulted in afresh for its data.
		faults = model.Unknown
	}
	return "pace: at " + o.Buffer + " " + phrase.PaceText(p, atDefault, faults)
}

// otherCPULine says how much CPU other processes took during the sweep's
// measurements: the worst row, and which rows they slowed (from a quarter
// of a core on average); "" where it was not measured.
func otherCPULine(rows []model.SweepRow) string {
	worst, noisy, measured := model.OtherCPU(rows)
	switch {
	case !measured:
		return ""
	case len(noisy) > 0:
		return fmt.Sprintf("▲ other processes kept up to %s cores busy during the measurements of %s: those rows are slowed by them",
			worst.Fixed(2), strings.Join(noisy, ", "))
	}
	return fmt.Sprintf("other processes: at most %s cores busy during any measurement (quiet)", worst.Fixed(2))
}

// CompareSweeps puts two saved sweeps side by side, size by size: time
// and GiB/s of each (the median measurement's) and the second's speed-up
// over the first, judged against noise (model.SweepRowsDifference: the
// ratio of the means, its interval and ≈). Both runs carry a sweep.
func CompareSweeps(w io.Writer, first, second Run) {
	a, b := first.Report.Sweep, second.Report.Sweep
	fmt.Fprintf(w, "| buffer size | %s time | %s time | %s GiB/s | %s GiB/s | speed-up |\n", first.Name, second.Name, first.Name, second.Name)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	byBuf := map[string]model.SweepRow{}
	for _, r := range b.Rows {
		byBuf[r.Buffer] = r
	}
	for _, r := range a.Rows {
		o, ok := byBuf[r.Buffer]
		if !ok {
			fmt.Fprintf(w, "| %s | %.3fs | n/a | %s | n/a | n/a |\n", r.Buffer, r.Seconds, rateNumber(r.ThroughputBps))
			continue
		}
		fmt.Fprintf(w, "| %s | %.3fs | %.3fs | %s | %s | %s |\n", r.Buffer, r.Seconds, o.Seconds,
			rateNumber(r.ThroughputBps), rateNumber(o.ThroughputBps), model.SweepRowsDifference(r, o).Cell())
	}
	fmt.Fprintln(w, "\nspeed-up: the ratio of the two sweeps' mean throughputs of the size over their repeats, with its 95% interval (Welch's t-test); ≈: within noise")
	fmt.Fprintf(w, "\n%s: %s\n%s: %s\n", first.Name, OptimumLine(a.Optimum), second.Name, OptimumLine(b.Optimum))
}
