package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

func bufText(req string, eff int) string { return withEffective(req, eff, "") }

// withOwn adds a real process's own buffer (as its socket had it when
// first seen) to a buffer's text: "2m (4m), own 208k".
func withOwn(text string, own int) string {
	if own <= 0 {
		return text
	}
	return text + ", own " + units.FormatSize(int64(own))
}

// countOf is n of noun, in the plural but for one: "1 socket", "4 sockets".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// printNeverRan says why a side of a whole alternate-mode run moved
// nothing: the run ended before its first turn, so its column is n/a.
func printNeverRan(w io.Writer, rep model.Report) {
	cfg := rep.Config
	if rep.Partial || cfg.Mode != model.ModeAlternate || cfg.Duration <= 0 {
		return
	}
	turn := model.TurnLength(time.Duration(cfg.Interval))
	for _, s := range rep.Sides {
		if s.Summary.Seconds > 0 || s.Summary.Bytes > 0 {
			continue
		}
		fmt.Fprintf(w, "%s never ran: in alternate mode the sides take turns of %v (4 intervals of %v, at least 1s) and the %v run ended before %s's turn; run at least %v (-t %d), or --mode concurrent\n",
			s.Name, turn, time.Duration(cfg.Interval), time.Duration(cfg.Duration), s.Name, 2*turn, int(math.Ceil((2 * turn).Seconds())))
	}
}

// errorsText is a side's failed requests; a real client's requests are
// not seen (a failing run ends the side, reported as its crash): n/a, not
// 0. A run saved before they were null has 0 there, as consumeText's
// zeros.
func errorsText(sm model.Summary) string {
	if sm.Errors == nil || sm.Settings.Exec != "" && *sm.Errors == 0 {
		return "n/a (a real client's requests are not seen)"
	}
	return strconv.FormatUint(*sm.Errors, 10)
}

// summaryGetter reads one figure of a summary.
type summaryGetter func(sm model.Summary) model.Figure

// summaryRow is one of the run table's figure rows: an entry of the
// table of figures, read from a summary.
type summaryRow struct {
	name   string
	get    summaryGetter
	format func(model.Figure) string
	ratio  bool
}

// summaryRows are the run table's figure rows: model.SummaryFigures, in
// its order, each with its label, format and whether a B/A ratio means
// something.
var summaryRows = func() []summaryRow {
	var rows []summaryRow
	for _, e := range model.SummaryFigures() {
		rows = append(rows, summaryRow{e.Long, func(sm model.Summary) model.Figure { return e.Get(&sm.Figures) },
			formatOf(e.Format), e.Ratio})
	}
	return rows
}()

// formatOf is how the tables print a figure of a format: a rate in
// --rate-unit's unit.
func formatOf(f model.FigureFormat) func(model.Figure) string {
	switch f {
	case model.FormatRate:
		return rate
	case model.FormatBytes:
		return size
	case model.FormatFixed2:
		return f2
	case model.FormatFixed3:
		return f3
	case model.FormatMs3:
		return ms3
	}
	return f1
}

// textRow is a row of text of the summary table; across: it names a
// setting, each one the side moved data under, in time order (Across).
type textRow struct {
	name   string
	get    func(sm model.Summary) string
	across bool
}

// bufferRow is the summary's row of one of a side's four buffers: as
// asked, what the kernel made of it and, for a real process, its own
// (withOwn). of picks the buffer's three figures from the side's.
func bufferRow(name string, of func(model.Buffers) (requested string, effective, own int)) textRow {
	return textRow{name, func(sm model.Summary) string {
		requested, effective, own := of(sm.SndBuf)
		return withOwn(bufText(requested, effective), own)
	}, true}
}

// summaryText are the summary's rows of text: the settings in effect and
// what was moved, a cell per side.
var summaryText = []textRow{
	bufferRow("server SO_SNDBUF (eff.)", func(b model.Buffers) (string, int, int) {
		return b.ServerRequested, b.ServerEffective, b.ServerOwn
	}),
	bufferRow("server SO_RCVBUF (eff.)", func(b model.Buffers) (string, int, int) {
		return b.ServerRcvRequested, b.ServerRcvEffective, b.ServerRcvOwn
	}),
	bufferRow("client SO_SNDBUF (eff.)", func(b model.Buffers) (string, int, int) {
		return b.ClientRequested, b.ClientEffective, b.ClientOwn
	}),
	bufferRow("client SO_RCVBUF (eff.)", func(b model.Buffers) (string, int, int) {
		return b.ClientRcvRequested, b.ClientRcvEffective, b.ClientRcvOwn
	}),
	{"placement (load/server cpu)", func(sm model.Summary) string {
		return string(sm.Placement.Setting) + " (" + sm.Placement.LoadCPUs + "/" + sm.Placement.ServerCPUs + ")"
	}, true},
	{"payload / time", func(sm model.Summary) string {
		assumed := ""
		if sm.PayloadAssumed {
			assumed = " (assumed: an export a client run)"
		}
		return fmt.Sprintf("%s%s / %.1fs", units.FormatBytes(float64(sm.Bytes)), assumed, sm.Seconds)
	}, false},
	{"errors", errorsText, false},
	{"consume", consumeText, false},
}

// Summary is run's text: one row per figure, a column per side and the
// B/A ratio, so it reads at 80 columns; then the segments, digests,
// events, crashes and warnings.
func Summary(w io.Writer, rep model.Report) {
	if len(rep.Sides) == 0 {
		return
	}
	if e := rep.MacOS; e != nil {
		// Above the table, whose first row is the B/A a reader might
		// quote as macOS's: the series' figure from a real Mac beside it.
		fmt.Fprintf(w, "▲ %s\n", phrase.MacOSEmulation(*e))
	}
	t := SummaryTable(rep)
	t.WriteText(w)
	if l := spreadLegend(t); l != "" {
		fmt.Fprintln(w, l)
	}
	for _, s := range rep.Sides {
		if why := reasonText(s.ReceiverChanged()); why != "" {
			fmt.Fprintf(w, "n/a %s: send buffer full/empty/fill and recv calls/2MiB mean ± σ: %s; the client and server rows are each process's own\n", s.Name, why)
		}
	}
	printSegments(w, rep)
	printRunNotes(w, rep)
}

// SummaryTable is run's table of figures and settings: a row per figure,
// a column per side, and with two sides their B/A ratio.
func SummaryTable(rep model.Report) Table {
	t := Table{Head: []string{"figure"}}
	for _, s := range rep.Sides {
		t.Head = append(t.Head, s.Name)
	}
	two := len(rep.Sides) == 2
	if two {
		t.Head = append(t.Head, "B/A")
	}
	for _, r := range summaryRows {
		cells := []string{r.name}
		var vals []model.Figure
		for _, s := range rep.Sides {
			v := r.get(s.Summary)
			vals = append(vals, v)
			cells = append(cells, r.format(v))
		}
		switch {
		case two && r.ratio:
			cells = append(cells, ratioCell(rep, r.get, vals[0], vals[1]))
		case two:
			cells = append(cells, "")
		}
		t.Add(cells...)
	}
	for _, r := range append(spreadRows, summaryText...) {
		cells := []string{r.name}
		for _, s := range rep.Sides {
			if r.across {
				cells = append(cells, Across(rep, s, func(f model.Figures) string { return r.get(model.Summary{Figures: f}) }))
				continue
			}
			cells = append(cells, r.get(s.Summary))
		}
		if two {
			cells = append(cells, "")
		}
		t.Add(cells...)
	}
	t.Right = make([]bool, len(t.Head))
	for i := 1; i < len(t.Right); i++ {
		t.Right[i] = true
	}
	return t
}

// printRunNotes are the lines after the table: root digests, events,
// crashes, warnings and whether the run is partial. (The macOS mark is
// above the table: Summary.)
func printRunNotes(w io.Writer, rep model.Report) {
	printNeverRan(w, rep)
	printUnattributed(w, rep)
	printSidesNoise(w, rep)
	printOtherCPU(w, rep)
	printControllerCPU(w, rep)
	printNoise(w, rep)
	printFillSource(w, rep)
	if sidesSharedCores(rep) {
		fmt.Fprintln(w, "pace: not judged — the sides ran at once on shared cores, so a process short of its core may have waited for the other side")
	}
	for _, s := range rep.Sides {
		// What set each side's pace: with one side waiting on its small
		// buffer and the other bound by its client's work, the gap
		// between them reads off these two lines.
		if v := model.VerdictOf(s.Summary.Figures); v.Client.Known() && !s.Summary.Changed && paceJudged(rep) {
			fmt.Fprintf(w, "pace %s (%s): %s\n", s.Name, s.Summary.Settings.SndBuf, phrase.VerdictText(v, nil, s.Summary.Client.FaultsPer2MiB))
		}
	}
	for _, s := range rep.Sides {
		if c := s.Summary.Consumed; c != nil && c.RootDigest != "" {
			fmt.Fprintf(w, "root digest %s (blksum's digest of the export, last of %d full passes): %s\n", s.Name, c.HashPasses, c.RootDigest)
		}
	}
	for _, e := range rep.Events {
		side := e.Side
		if side == "" {
			side = "pair"
		}
		fmt.Fprintf(w, "event %6.2fs %s %s\n", e.T, side, phrase.EventLong(e))
	}
	for _, c := range rep.Crashes {
		fmt.Fprintf(w, "crash %6.2fs %s\n", c.T, c.Text())
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(w, "warning %6.2fs %s\n", wn.T, phrase.WarningLong(wn))
	}
	if rep.Partial {
		fmt.Fprintf(w, "PARTIAL RUN: %s\n", rep.PartialReason)
	}
}

// printFillSource says what measured each side's send-buffer fill,
// where the run says it.
func printFillSource(w io.Writer, rep model.Report) {
	for _, s := range rep.Sides {
		switch s.FillSource {
		case model.FillSourceKernel:
			fmt.Fprintf(w, "fill %s: measured in the kernel, the sender's level read 1000 times a second by a timer\n", s.Name)
		case model.FillSourceEvents:
			fmt.Fprintf(w, "fill %s: measured in the kernel, at every change of the sender's buffer, weighted by time\n", s.Name)
		case model.FillSourceSampler:
			why := "asked for with --fill-source sampler"
			if model.FillInKernel(rep.Config.FillSource()) {
				why = "the kernel's programs do not measure it here: TCP data sockets, or programs that could not load, which nbdscope doctor says"
			}
			fmt.Fprintf(w, "fill %s: sampled from user space, 100 times a second (%s)\n", s.Name, why)
		}
	}
}

func f1(v model.Figure) string { return v.Fixed(1) }
func f2(v model.Figure) string { return v.Fixed(2) }
func f3(v model.Figure) string { return v.Fixed(3) }

// ms3 prints seconds as milliseconds with 3 decimals.
func ms3(v model.Figure) string { return (1000 * v).Fixed(3) }

// consumeText is what a side's consume mode found, in a table cell.
func consumeText(sm model.Summary) string {
	c := sm.Consumed
	// Our consume mode never ran: nil, or zeros in a run saved before
	// consumed could be null.
	if c == nil || sm.Settings.Exec != "" && c.ScannedBuffers == 0 && c.HashBlocks == 0 {
		return "n/a (a real client was the load)"
	}
	switch sm.Consume {
	case model.ConsumeScan:
		return fmt.Sprintf("scan: %d/%d zero", c.ZeroBuffers, c.ScannedBuffers)
	case model.ConsumeHash:
		return fmt.Sprintf("hash×%d: %d passes", c.HashThreads, c.HashPasses)
	}
	return string(sm.Consume)
}

// printSegments prints, for a run with changes, one row per stretch of
// unchanged settings of each side: the settings that set it apart and the
// headline figures, so before and after read from one run.
func printSegments(w io.Writer, rep model.Report) {
	if !rep.Changed() {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "segments (one row per stretch of unchanged settings):")
	if t, ok := Segments(rep); ok {
		segmentRates(&t, rep)
		t.WriteText(w)
	}
	printSegmentSpreads(w, rep)
	// What set each stretch's pace: a change of buffer shows as waiting
	// before and work after (or the other way round).
	for _, s := range rep.Sides {
		for _, g := range s.Segments {
			if v := model.VerdictOf(g.Figures); v.Client.Known() && len(s.Segments) > 1 && paceJudged(rep) {
				fmt.Fprintf(w, "pace %s %.1f–%.1f s (%s): %s\n", s.Name, g.From, g.To, g.Settings.SndBuf, phrase.VerdictText(v, nil, g.Client.FaultsPer2MiB))
			}
		}
	}
}

// printOtherCPU says how much CPU other processes took during the run,
// and warns when it was enough to slow the figures.
func printOtherCPU(w io.Writer, rep model.Report) {
	o := rep.OtherCoresBusy
	if o == nil || !o.Known() {
		return
	}
	if rep.Noisy() {
		fmt.Fprintf(w, "▲ other processes kept %s cores busy on average during the run (of %d): every figure here is slowed by them, and no pace is judged\n",
			o.Fixed(2), rep.Platform.Cores)
		return
	}
	fmt.Fprintf(w, "other processes: %s cores busy on average during the run (quiet)\n", o.Fixed(2))
}

// printControllerCPU says what nbdscope's own controller took, when that
// passes model.ControllerNoisy: the CPU measuring took from the cores the
// pair ran on.
func printControllerCPU(w io.Writer, rep model.Report) {
	c := rep.ControllerCoresBusy
	if c == nil || !c.Known() || *c < model.ControllerNoisy {
		return
	}
	fmt.Fprintf(w, "▲ nbdscope's own controller used %.1f%% of a core during the run, taken from the cores the pair ran on\n", 100*float64(*c))
}

// paceJudged: a pace can be told from the run (no other load took the
// cores, and the sides did not share them).
func paceJudged(rep model.Report) bool { return !rep.Noisy() && !sidesSharedCores(rep) }

// sidesSharedCores reports whether the sides ran at once (concurrent mode)
// with a CPU in common: then a process short of its core may have waited
// for the other side, not for its peer, and PaceOf's "neither used all of
// its CPU" would be wrong.
func sidesSharedCores(rep model.Report) bool {
	if rep.Config.Mode != model.ModeConcurrent || len(rep.Sides) < 2 {
		return false
	}
	cpus := func(pl model.Placement) []string {
		return append(strings.Split(pl.LoadCPUs, ","), strings.Split(pl.ServerCPUs, ",")...)
	}
	a, b := cpus(rep.Sides[0].Summary.Placement), cpus(rep.Sides[1].Summary.Placement)
	for _, c := range a {
		if c != "" && c != "any" && slices.Contains(b, c) { // "any": not held, and then no bound is claimed anyway
			return true
		}
	}
	return false
}
