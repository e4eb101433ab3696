package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/stats"
	"nbdscope/units"
)

// ---- figures shared by the markdown summary and Compare ----

// sideConfig finds a side's configuration by name, else by position.
func sideConfig(r *model.Report, name string, idx int) model.SideConfig {
	for _, s := range r.Config.Sides {
		if s.Name == name {
			return s
		}
	}
	if idx >= 0 && idx < len(r.Config.Sides) {
		return r.Config.Sides[idx]
	}
	return model.SideConfig{Name: name}
}

// num formats a figure with prec decimals, "n/a" when unknown.
func num(f model.Figure, prec int) string { return f.Fixed(prec) }

// bufferCell is the bulk sender's requested send buffer and its effective
// size: the server's for reads, the client's for writes.
func bufferCell(s model.Figures, sc model.SideConfig) string {
	req, eff := s.SndBuf.ServerRequested, s.SndBuf.ServerEffective
	if req == "" {
		req = sc.SndBuf.String()
	}
	if s.Direction() == model.FlowWrite {
		req, eff = s.SndBuf.ClientRequested, s.SndBuf.ClientEffective
		if req == "" {
			req = sc.ClientSndBuf.String()
		}
	}
	return withEffective(req, eff, "eff. ")
}

// ---- markdown ----

// writeMarkdownHead writes the title and the run's facts: time, preset,
// version, platform, buffer limits, mode, and whether it is partial.
func writeMarkdownHead(w io.Writer, name string, r *model.Report) {
	title := name
	if title == "" {
		title = "(unsaved)"
	}
	fmt.Fprintf(w, "# nbdscope run %s\n\n", mdEscape(title))
	if !r.Time.IsZero() {
		fmt.Fprintf(w, "- time: %s\n", r.Time.Format("2006-01-02 15:04:05 MST"))
	}
	if r.Preset != "" {
		fmt.Fprintf(w, "- preset: %s\n", mdEscape(r.Preset))
	}
	if r.Nbdscope != "" {
		fmt.Fprintf(w, "- nbdscope: %s\n", mdEscape(r.Nbdscope))
	}
	pf := r.Platform
	var plat []string
	if pf.OS != "" {
		plat = append(plat, pf.OS+"/"+pf.Arch)
	}
	for _, s := range []string{pf.Kernel, pf.CPUModel} {
		if s != "" {
			plat = append(plat, s)
		}
	}
	if pf.Cores > 0 {
		plat = append(plat, fmt.Sprintf("%d cores", pf.Cores))
	}
	if len(plat) > 0 {
		fmt.Fprintf(w, "- platform: %s\n", mdEscape(strings.Join(plat, ", ")))
	}
	if e := r.MacOS; e != nil {
		fmt.Fprintf(w, "- **%s**\n", mdEscape(phrase.MacOSEmulation(*e)))
	}
	if pf.UnixSndbufDefault > 0 || pf.UnixSndbufMax > 0 {
		fmt.Fprintf(w, "- unix socket SO_SNDBUF (effective): default %s, max %s\n", sizeOrNA(pf.UnixSndbufDefault), sizeOrNA(pf.UnixSndbufMax))
	}
	if len(pf.Limits) > 0 {
		var ls []string
		for k, v := range pf.Limits {
			ls = append(ls, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(ls)
		fmt.Fprintf(w, "- limits: %s\n", strings.Join(ls, ", "))
	}
	if r.Config.Mode != "" {
		d := "until stopped"
		if r.Config.Duration > 0 {
			d = r.Config.Duration.D().String()
		}
		fmt.Fprintf(w, "- mode: %s, interval %v, duration %s\n", r.Config.Mode, r.Config.Interval.D(), d)
	}
	if r.Partial {
		fmt.Fprintf(w, "- **partial run**: %s\n", mdEscape(r.PartialReason))
	}
	fmt.Fprintln(w)

}

// RunMarkdown writes a run for people (runs show, runs export --format
// md): the platform and setup, a per-side summary table in the shape of
// published benchmark tables (| side | buffer size | time | user | system |
// GiB/s | syscalls per 2 MiB |), the segments of a run with changes, then
// the events, warnings and crashes. Figures that were not measured read
// "n/a". name is the run's name ("" for one not saved).
func RunMarkdown(out io.Writer, name string, rep model.Report) error {
	w := bufio.NewWriter(out)
	stamped := rep.WithStamps()
	r := &stamped
	writeMarkdownHead(w, name, r)
	sum := Table{
		Head:  []string{"side", "buffer size", "time", "user", "system", rateName(), "syscalls per 2 MiB", "sndbuf full/empty %"},
		Right: []bool{false, false, true, true, true, true, true, true},
	}
	setup := Table{
		Head:  []string{"side", "workload", "transport", "connections", "request size", "in flight", "server sndbuf", "server rcvbuf", "client sndbuf", "client rcvbuf"},
		Right: []bool{false, false, false, true, true, true, false, false, false, false},
	}
	var clientOnly []string // the footnotes of the * marks, each once
	for i, sr := range r.Sides {
		sc := sideConfig(r, sr.Name, i)
		s := sr.Summary
		cpu := s.CPU()
		mark := ""
		if cpu.ClientOnly {
			mark = "*"
			if why := clientOnlyWhy(s.Figures); !slices.Contains(clientOnly, why) {
				clientOnly = append(clientOnly, why)
			}
		}
		seconds := "n/a"
		if s.Seconds > 0 {
			seconds = strconv.FormatFloat(s.Seconds, 'f', 2, 64)
		}
		sum.Add(mdEscape(sr.Name), mdEscape(Across(*r, sr, func(f model.Figures) string { return bufferCell(f, sc) })), seconds,
			num(cpu.UserS, 2)+mark, num(cpu.SysS, 2)+mark, rateNumber(s.ThroughputBps), num(s.ReceiverCallsPer2MiB(), 2),
			FillCell(s.Fill()))
		transport := string(sc.Transport)
		if sc.Target != "" {
			transport = sc.Target
		}
		conns, req, inFlight := loadShape(sc)
		setup.Add(mdEscape(sr.Name), string(sc.Workload), mdEscape(transport), conns, req, inFlight,
			sc.SndBuf.String(), sc.ServerRcvBuf.String(), sc.ClientSndBuf.String(), sc.ClientRcvBuf.String())
	}
	sum.WriteMarkdown(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "- buffer size: SO_SNDBUF requested by the sender of the bulk data (the server for reads, the client for writes) and its effective size.")
	fmt.Fprintln(w, "- time: active seconds. user, system: CPU seconds of client and server together.")
	fmt.Fprintln(w, "- syscalls per 2 MiB: receive calls per 2 MiB of payload of the receiver of the bulk data (the client for reads, the server for writes).")
	fmt.Fprintln(w, "- sndbuf full/empty %: the share of 100 Hz samples in which the bulk sender's send buffer held ≥ 90% of its limit (it waited on the reader) and < 10% (the reader waited on it).")
	fmt.Fprintln(w, "- n/a: not measured.")
	for _, why := range clientOnly {
		fmt.Fprintln(w, "- \\*: "+why)
	}
	writeMixedSummaries(w, r)
	writeSegments(w, r)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Setup")
	fmt.Fprintln(w)
	if len(r.Events) > 0 {
		fmt.Fprintln(w, "At the start; the changes are under Events.")
		fmt.Fprintln(w)
	}
	setup.WriteMarkdown(w)
	writeExecLoads(w, r)

	writeEvents(w, r.Events)
	writeWarningsAndCrashes(w, r)
	return w.Flush()
}

// writeEvents is the markdown's Events section: each change as it took
// effect, and each finished run of a real client.
func writeEvents(w io.Writer, events []model.Event) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Events")
	fmt.Fprintln(w)
	if len(events) == 0 {
		fmt.Fprintln(w, "none")
		return
	}
	ev := Table{Head: []string{"t (s)", "side", "setting", "from", "to"}, Right: []bool{true, false, false, false, false}}
	for _, e := range events {
		at := strconv.FormatFloat(e.T, 'f', 2, 64)
		if e.Setting == model.ExecRunEvent { // not a change: a real client's run that ended
			ev.Add(at, mdEscape(string(e.Side)), "client run", "", "finished in "+mdEscape(e.To))
			continue
		}
		to := e.To
		if e.Reconnected {
			to += " (reconnected)"
		}
		to += phrase.EventReached(e) // a real process's: what its socket read back
		ev.Add(at, mdEscape(string(e.Side)), mdEscape(e.Setting), mdEscape(e.From), mdEscape(to))
	}
	ev.WriteMarkdown(w)
}

// loadShape is a side's connections, request size and requests in
// flight, as the setup gives them: a real client's are its own
// (writeExecLoads names it).
func loadShape(sc model.SideConfig) (conns, req, inFlight string) {
	if sc.Exec != "" {
		return "its own", "its own", "its own"
	}
	return strconv.Itoa(sc.Connections), units.FormatSize(int64(sc.RequestSize)), strconv.Itoa(sc.InFlight)
}

// writeExecLoads names, under the setup, the real client of each side
// whose load it was at the start.
func writeExecLoads(w io.Writer, r *model.Report) {
	first := true
	for i, sr := range r.Sides {
		sc := sideConfig(r, sr.Name, i)
		if sc.Exec == "" {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "- %s's load: a real client, `%s` (its connections, request size and requests in flight are its own)\n", mdEscape(sr.Name), sc.Exec)
	}
}

// writeMixedSummaries says, under the summary table, which sides' rows
// span changed settings: their figures mix the segments, and their buffer
// cell lists what each stretch ran with.
func writeMixedSummaries(w io.Writer, r *model.Report) {
	for _, sr := range r.Sides {
		if changed := ChangedSettings(*r, sr); len(changed) > 0 {
			fmt.Fprintf(w, "- %s: the whole run, across changes of %s: its figures mix the segments (see Segments for each stretch).\n",
				mdEscape(sr.Name), strings.Join(changed, ", "))
		}
		if why := reasonText(sr.ReceiverChanged()); why != "" {
			fmt.Fprintf(w, "- %s: syscalls per 2 MiB and sndbuf full/empty %% n/a: %s.\n", mdEscape(sr.Name), why)
		}
	}
}

// writeSegments writes, for a run whose settings changed, one row per
// stretch of unchanged settings of each side: before and after, from one
// run. Each row's figures are those measured under its settings; every
// setting that differs between rows has a column (SegmentTable).
func writeSegments(w io.Writer, r *model.Report) {
	seg, ok := Segments(*r)
	if !ok {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Segments")
	fmt.Fprintln(w)
	if len(seg.Same) > 0 {
		fmt.Fprintf(w, "In every segment: %s.\n\n", mdEscape(strings.Join(seg.Same, ", ")))
	}
	t := Table{Head: seg.Head, Right: seg.Right}
	for _, row := range seg.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = mdEscape(c)
		}
		t.Add(cells...)
	}
	t.WriteMarkdown(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "- "+SegmentNote)
}

// writeWarningsAndCrashes writes the run's warnings (with their fixes)
// and crashes (with the stderr tail).
func writeWarningsAndCrashes(w io.Writer, r *model.Report) {
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "## Warnings")
		fmt.Fprintln(w)
		for _, x := range r.Warnings {
			text, side := phrase.WarningLong(x), ""
			if x.Side != "" && !strings.HasPrefix(text, "side "+string(x.Side)+":") { // once: the text may name it
				side = " side " + string(x.Side)
			}
			fmt.Fprintf(w, "- %.2fs%s: %s", x.T, side, mdEscape(text))
			if fix := phrase.WarningFix(x); fix != "" {
				fmt.Fprintf(w, " (fix: `%s`)", strings.ReplaceAll(fix, "`", "'"))
			}
			fmt.Fprintln(w)
		}
	}
	if len(r.Crashes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "## Crashes")
		fmt.Fprintln(w)
		for _, c := range r.Crashes {
			fmt.Fprintf(w, "- %.2fs %s\n", c.T, mdEscape(c.Text()))
			for _, l := range c.Stderr {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
}

func sizeOrNA(n int) string {
	if n <= 0 {
		return "n/a"
	}
	return units.FormatSize(int64(n))
}

// ---- Compare ----

// Run is a run and its name, for the tables that name runs.
type Run struct {
	Name   string
	Report model.Report
}

// Compare writes two runs side by side, per side name, with the ratio b/a
// of throughput, syscalls per 2 MiB (the receiver's) and CPU seconds per
// GiB (client and server), as an aligned markdown table.
func Compare(out io.Writer, a, b Run) error {
	w := bufio.NewWriter(out)
	a.Report, b.Report = a.Report.WithStamps(), b.Report.WithStamps()
	describe := func(label string, rf Run) {
		parts := []string{}
		if !rf.Report.Time.IsZero() {
			parts = append(parts, rf.Report.Time.Format(time.DateTime))
		}
		if rf.Report.Preset != "" {
			parts = append(parts, "preset "+rf.Report.Preset)
		}
		if rf.Report.Partial {
			parts = append(parts, "partial: "+rf.Report.PartialCause())
		}
		extra := ""
		if len(parts) > 0 {
			extra = " (" + strings.Join(parts, ", ") + ")"
		}
		fmt.Fprintf(w, "- %s: %s%s\n", label, mdEscape(rf.Name), extra)
	}
	describe("a", a)
	describe("b", b)
	fmt.Fprintln(w, "- b/a: the ratio of b to a")
	fmt.Fprintln(w)

	var names []string
	seen := map[string]bool{}
	for _, rf := range []Run{a, b} {
		for _, s := range rf.Report.Sides {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	t := Table{
		Head:  []string{"side", "figure", "a", "b", "b/a"},
		Right: []bool{false, false, true, true, true},
	}
	for _, name := range names {
		fa, oka := compareFigures(a, name)
		fb, okb := compareFigures(b, name)
		for i, label := range []string{rateName(), "syscalls per 2 MiB", "CPU s/GiB"} {
			va, vb := model.Unknown, model.Unknown
			if oka {
				va = fa[i]
			}
			if okb {
				vb = fb[i]
			}
			t.Add(mdEscape(name), label, num(va, 2), num(vb, 2), compareCell(a.Report, b.Report, name, i, va, vb))
		}
	}
	t.WriteMarkdown(w)
	if spreadLegend(t) != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "- b/a [low–high]: the ratio's 95% interval, from each run's batches of the side (a turn, or a second, each: Welch's t-test); ≈: the interval holds 1, no difference beyond the runs' noise")
	}
	var why []string
	for _, rf := range []Run{a, b} {
		for _, s := range rf.Report.Sides {
			if r := reasonText(s.ReceiverChanged()); r != "" {
				why = append(why, fmt.Sprintf("- %s's %s: syscalls per 2 MiB n/a: %s", mdEscape(rf.Name), mdEscape(s.Name), r))
			}
		}
	}
	if len(why) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(why, "\n"))
	}
	writeStartDiffs(w, a, b, names)
	return w.Flush()
}

// writeStartDiffs says, per side, which settings the two runs started
// with differently ("B: server ours → qemu-nbd -r …; server-rcvbuf default
// → 1m"): the ratios are of those changes, and the table alone did not say
// that b's B was a real qemu-nbd.
func writeStartDiffs(w io.Writer, a, b Run, names []string) {
	var lines []string
	for i, name := range names {
		sa := model.StampOf(sideConfig(&a.Report, name, i))
		sb := model.StampOf(sideConfig(&b.Report, name, i))
		var diffs []string
		for _, st := range model.Settings() {
			va, oka := sa.Text(st.Name)
			vb, okb := sb.Text(st.Name)
			if !oka || !okb || va == vb {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("%s %s → %s", st.Name, ourIfEmpty(st.Name, va), ourIfEmpty(st.Name, vb)))
		}
		if len(diffs) > 0 {
			lines = append(lines, fmt.Sprintf("- %s started differently: %s", mdEscape(name), mdEscape(strings.Join(diffs, "; "))))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
}

// ourIfEmpty names an empty server or exec command: nbdscope's own.
func ourIfEmpty(setting, v string) string {
	if v == "" && (setting == model.SetServer || setting == model.SetExec) {
		return "ours"
	}
	if v == "" {
		return "-"
	}
	return v
}

// compareFigures returns throughput (GiB/s), receiver syscalls per 2 MiB
// and CPU s/GiB of a side; ok is false when the run has no such side.
func compareFigures(rf Run, side string) (f [3]model.Figure, ok bool) {
	for _, sr := range rf.Report.Sides {
		if sr.Name != side {
			continue
		}
		return [3]model.Figure{shownUnits(sr.Summary.ThroughputBps), sr.Summary.ReceiverCallsPer2MiB(), sr.Summary.CPU().SPerGiB}, true
	}
	return f, false
}

// compareGetters read compareFigures' figures of a summary, in its order.
var compareGetters = [3]summaryGetter{
	func(sm model.Summary) model.Figure { return sm.ThroughputBps },
	func(sm model.Summary) model.Figure { return sm.ReceiverCallsPer2MiB() },
	func(sm model.Summary) model.Figure { return sm.CPU().SPerGiB },
}

// compareCell is a b/a cell of runs compare: the ratio with its ≈ mark and
// interval from the figure's verdict over each run's batches of the side
// (model.RunsDifference), the bare ratio where either run has none.
func compareCell(a, b model.Report, side string, fig int, va, vb model.Figure) string {
	if d := model.RunsDifference(a, b, model.SideID(strings.ToUpper(side)), compareGetters[fig]); d.Kind != stats.NoData {
		return d.Cell()
	}
	return ratio(va, vb)
}

// clientOnlyWhy is why a side's CPU is its client's alone: its server is
// an external one nbdscope does not measure, or one --target process that
// serves both sides, measured but not to be split between them.
func clientOnlyWhy(f model.Figures) string {
	if f.ServerNA != nil {
		return "client only; the server's CPU is n/a: " + phrase.ReasonLong(*f.ServerNA) + "."
	}
	return "client only; the server is external and not measured."
}
