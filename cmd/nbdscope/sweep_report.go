package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"nbdscope/engine"
	"nbdscope/units"
)

// The sweep's outputs, all from one engine.SweepReport: the seed's table
// (markdown), a bar per size, the optimum line, and CSV.

// sweepSetting names what was swept, for captions.
func sweepSetting(spec engine.SweepSpec) string {
	switch spec.Setting {
	case engine.SetClientSndBuf:
		return "client send buffer"
	case engine.SetClientRcvBuf:
		return "client receive buffer"
	}
	return "server send buffer"
}

// sweptSizes are the sizes actually swept (the rows), in order.
func sweptSizes(rows []engine.SweepRow) string {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Buffer
	}
	return strings.Join(names, ", ")
}

func bufferCell(r engine.SweepRow) string {
	if r.Effective > 0 {
		return r.Buffer + " (" + units.FormatSize(int64(r.Effective)) + ")"
	}
	return r.Buffer
}

// gibps is a rate in the sweep's unit, GiB/s unless --rate-unit says
// otherwise (rate_unit.go).
func gibps(f engine.Figure) string { return rateNumber(f) }

func secs(f engine.Figure) string {
	if !f.Known() {
		return engine.NA
	}
	return f.Fixed(3) + "s"
}

// writeSweepMarkdown prints the seed's table shape, one row per size, then
// the optimum line (sweep --markdown).
func writeSweepMarkdown(w io.Writer, rep engine.SweepReport) {
	writeSweepTable(w, rep)
	fmt.Fprintln(w)
	writeSweepEnd(w, rep)
}

// writeSweepText is sweep's default output: the table, a bar per size,
// then the optimum line.
func writeSweepText(w io.Writer, rep engine.SweepReport, width int) {
	writeSweepTable(w, rep)
	fmt.Fprintln(w)
	writeSweepBars(w, rep, width)
	fmt.Fprintln(w)
	writeSweepEnd(w, rep)
}

// writeSweepEnd prints the optimum line and what set the pace there, and
// says when the sweep is partial.
func writeSweepEnd(w io.Writer, rep engine.SweepReport) {
	fmt.Fprintln(w, optimumLine(rep.Optimum))
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

// writeSweepTable prints the seed's table shape, one row per size.
func writeSweepTable(w io.Writer, rep engine.SweepReport) {
	if rep.Spec.Exec != nil {
		writeExecTable(w, rep)
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
	fmt.Fprintln(w, "| buffer size | time | client user | client system | server user | server system | calls per 2 MiB | EAGAIN per 2 MiB | "+rateName()+" |"+
		timeSpreadHead+measuredHead(perRow))
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"+timeSpreadRule+measuredRule(perRow))
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "| %s | %.3fs | %.3fs | %.3fs | %s | %s | %s | %s | %s |%s%s\n", bufferCell(r), r.Seconds, r.ClientUserS, r.ClientSysS,
			secs(r.ServerUserS), secs(r.ServerSysS), r.RecvPer2MiB.Fixed(1), r.EAGAINPer2MiB.Fixed(1), gibps(r.ThroughputBps),
			timeSpreadCells(r), measuredCell(perRow, r, rep.Spec.Repeat))
	}
}

// medianOf says what each row is the median of: "median of 3" when every
// row had the sweep's --repeat measurements, "median of 2 (3 asked)" when
// a sweep cut short left every row with the same fewer. When the rows
// differ no one count is true of them all: the words say so, and perRow
// asks for a measured column with each row's count ("1 of 3"). what is
// "measurements" or "runs".
func medianOf(rep engine.SweepReport, what string) (words string, perRow bool) {
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
func measuredCell(perRow bool, r engine.SweepRow, of int) string {
	return ifPerRow(perRow, fmt.Sprintf(" %d of %d |", r.Repeats, of))
}

func ifPerRow(perRow bool, s string) string {
	if perRow {
		return s
	}
	return ""
}

// optimumLine is the seed's "optimal: 2m (12.6 times faster than
// default)", with the optimum's GiB/s, for a sweep of our load and of a
// real client alike: "optimal: 1m (3.42 GiB/s, 2.40 times faster than
// default); within 5%: 1m, 2m, 4m".
func optimumLine(o *engine.SweepOptimum) string {
	if o == nil {
		return "optimal: n/a (no size moved any payload)"
	}
	vs := "; the default was not swept"
	switch {
	case o.Buffer == engine.BufDefaultName:
		vs = ", the default"
	case o.VsDefault.Known():
		vs = fmt.Sprintf(", %.2f times faster than default", float64(o.VsDefault))
	}
	if n := o.Noise; n != nil && n.Known && n.Within {
		return noiseTied(o, vs) // no winner named (sweep_stats_report.go)
	}
	return fmt.Sprintf("optimal: %s (%s %s%s); within %d%%: %s%s", o.Buffer, gibps(o.ThroughputBps), rateName(), vs,
		int(engine.OptimumTolerance*100), strings.Join(o.Within5Pct, ", "), noiseLead(o))
}

// barEighths draws a bar to an eighth of a cell.
var barEighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// writeSweepBars draws one horizontal bar per size, scaled so the fastest
// fills the width, labelled with its GiB/s; the caption names the sizes
// swept.
func writeSweepBars(w io.Writer, rep engine.SweepReport, width int) {
	label, value := 0, 0
	var top float64
	for _, r := range rep.Rows {
		label = max(label, len([]rune(bufferCell(r))))
		value = max(value, len(gibps(r.ThroughputBps)))
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
		cell := bufferCell(r)
		pad := label - len([]rune(cell))
		fmt.Fprintf(w, "  %s%s %s%s %s\n", cell, strings.Repeat(" ", pad), bar,
			strings.Repeat(" ", room-len([]rune(bar))), gibps(r.ThroughputBps))
	}
}

// writeSweepCSV writes a row per size: the buffer, the time to move the
// sweep's bytes, then engine's figure columns (the same as run --csv) of
// the median measurement, then the optimum in every row's optimal,
// within_5pct and x_default columns.
func writeSweepCSV(w io.Writer, rep engine.SweepReport) error {
	o := rep.Optimum
	var def engine.Figure = engine.Unknown
	for _, r := range rep.Rows {
		if r.Buffer == engine.BufDefaultName {
			def = r.ThroughputBps
		}
	}
	rows := make([]engine.CSVRow, len(rep.Rows))
	for i := range rep.Rows {
		r := &rep.Rows[i]
		optimal, within := false, false
		if o != nil {
			optimal = r.Buffer == o.Buffer
			within = contains(o.Within5Pct, r.Buffer)
		}
		xdef := ""
		if def.Known() && def > 0 && r.ThroughputBps.Known() {
			xdef = strconv.FormatFloat(float64(r.ThroughputBps/def), 'f', 3, 64)
		}
		rows[i] = engine.CSVRow{
			Lead:    []string{r.Buffer, strconv.Itoa(r.Effective), strconv.Itoa(r.Repeats), ff(r.Seconds)},
			Figures: &r.Figures,
			Trail:   []string{strconv.FormatBool(optimal), strconv.FormatBool(within), xdef, strconv.FormatBool(rep.Partial)},
		}
		if rep.Spec.Exec != nil {
			rows[i].Trail = append(rows[i].Trail, execCSVCells(rep, *r)...)
		}
		rows[i].Trail = append(rows[i].Trail, timeStatsCSVCells(rep, *r)...)
	}
	trail := []string{"optimal", "within_5pct", "x_default", "partial"}
	if rep.Spec.Exec != nil {
		trail = append(trail, execCSVHeader...)
	}
	trail = append(trail, timeStatsCSVHeader...)
	return engine.WriteFiguresCSV(w, []string{"buffer", "effective", "repeats", "time_s"}, trail, rows)
}

func ff(v float64) string { return units.Fixed(v, 3) }

// paceLine says what set the pace at the optimum, and how busy the same
// process was at the default, so a ratio smaller than the seed's explains
// itself: "pace: at 2m the client used all of its 1 core (0.98 cores busy;
// 0.86 at default): its own work, not waiting, sets the pace here". ""
// when there is no optimum or no CPU figure.
func paceLine(rep engine.SweepReport) string {
	o := rep.Optimum
	if o == nil {
		return ""
	}
	var best, def *engine.SweepRow
	for i := range rep.Rows {
		switch rep.Rows[i].Buffer {
		case o.Buffer:
			best = &rep.Rows[i]
		case engine.BufDefaultName:
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
	if o := best.OtherCoresBusy; o != nil && *o >= engine.OtherCoresNoisy {
		return fmt.Sprintf("pace: at %s not judged — other processes kept %s cores busy during its measurements, slowing them", best.Buffer, o.Fixed(2))
	}
	var atDefault *engine.Pace
	if def != nil {
		dp := def.Pace()
		atDefault = &dp
	}
	return "pace: at " + o.Buffer + " " + paceText(p, atDefault, best.Figures.Client.FaultsPer2MiB)
}

// paceText is the words for a pace, shared by a sweep's line and a run's:
// the process that used all of the cores it was held to, with its cores
// busy (CPU seconds per second of load: the drain after a turn can put
// it a little over the cores it had), or that neither did; with the same
// figure under the default buffer when def is given ("0.86 at default"),
// and faultNote for the client.
func paceText(p engine.Pace, def *engine.Pace, clientFaults engine.Figure) string {
	atDefault := func(pick func(engine.Pace) engine.Figure) string {
		if def == nil || !pick(*def).Known() {
			return ""
		}
		return pick(*def).Fixed(2) + " at default"
	}
	// full is "(0.98 cores busy; 0.86 at default)", part "0.88 (0.77 at
	// default)": the figure of a process that filled its core, and of one
	// that did not.
	full := func(v engine.Figure, pick func(engine.Pace) engine.Figure) string {
		if d := atDefault(pick); d != "" {
			return "(" + v.Fixed(2) + " cores busy; " + d + ")"
		}
		return "(" + v.Fixed(2) + " cores busy)"
	}
	part := func(v engine.Figure, pick func(engine.Pace) engine.Figure) string {
		if d := atDefault(pick); d != "" {
			return v.Fixed(2) + " (" + d + ")"
		}
		return v.Fixed(2)
	}
	client := func(q engine.Pace) engine.Figure { return q.Client }
	server := func(q engine.Pace) engine.Figure { return q.Server }
	both := func(q engine.Pace) engine.Figure { return q.Client + q.Server }
	const notWaiting = ": its own work, not waiting, sets the pace here"
	switch p.Bound {
	case engine.BoundClient:
		return fmt.Sprintf("the client used all of its %s %s%s%s", cores(p.ClientCores), full(p.Client, client), notWaiting, faultNote(clientFaults))
	case engine.BoundServer:
		return fmt.Sprintf("the server used all of its %s %s%s", cores(p.ServerCores), full(p.Server, server), notWaiting)
	case engine.BoundCore:
		return fmt.Sprintf("client and server together used all of the %s they share %s: their work, not waiting, sets the pace here",
			cores(p.ClientCores), full(p.Client+p.Server, both))
	}
	busy := fmt.Sprintf("client %s, server %s cores busy", part(p.Client, client), part(p.Server, server))
	if p.ClientCores == 0 {
		return busy + " (not held to cores, so no bound is claimed)"
	}
	return busy + ": neither used all of its CPU; the rest of the time they waited on each other"
}

// otherCPULine says how much CPU other processes took during the sweep's
// measurements: the worst row, and which rows they slowed (from a quarter
// of a core on average); "" where it was not measured.
func otherCPULine(rows []engine.SweepRow) string {
	worst, measured := engine.Figure(0), false
	var noisy []string
	for _, r := range rows {
		o := r.OtherCoresBusy
		if o == nil || !o.Known() {
			continue
		}
		measured = true
		worst = max(worst, *o)
		if *o >= engine.OtherCoresNoisy {
			noisy = append(noisy, r.Buffer)
		}
	}
	switch {
	case !measured:
		return ""
	case len(noisy) > 0:
		return fmt.Sprintf("▲ other processes kept up to %s cores busy during the measurements of %s: those rows are slowed by them",
			worst.Fixed(2), strings.Join(noisy, ", "))
	}
	return fmt.Sprintf("other processes: at most %s cores busy during any measurement (quiet)", worst.Fixed(2))
}

// faultsFresh is the client's page faults per 2 MiB from which it is said
// to fault its buffers in afresh: an eighth of the 512 pages a 2 MiB
// payload fills. A client that reuses its buffers takes a handful.
const faultsFresh = 64

// faultNote adds, for a client that faults its buffers in afresh, that
// this may be its work: where a fault is dear (a VM that backs memory
// lazily: 10-16 µs here) it alone can set the pace.
func faultNote(faults engine.Figure) string {
	if !faults.Known() || faults < faultsFresh {
		return ""
	}
	return fmt.Sprintf("; it took %s page faults per 2 MiB, faulting its buffers in afresh, and where a fault is dear (a VM) that can be most of its work",
		faults.Fixed(0))
}

// cores is "1 core", "2 cores".
func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return fmt.Sprintf("%d cores", n)
}
