package report

// The table of a run's segments — one row per stretch of unchanged
// settings of each side — as one model that both `run`'s text and the
// markdown export (runs show, runs export) print. Its setting columns come
// from model's settings table: every setting whose value differs between
// the rows gets a column, and the settings that never change are named
// once, above the table. So two stretches that differ only in, say,
// transport or placement can always be told apart.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"nbdscope/model"
)

// SegmentTable is a run's segments as rows of text cells.
type SegmentTable struct {
	// Same are the settings equal in every row, "name value", in the
	// settings table's order (a setting that does not apply, such as the
	// read share of a read workload, is left out).
	Same []string
	// Settings are the names of the settings that got a column.
	Settings []string
	Table
}

// figure is a column of measured figures.
type figure struct {
	head string
	cell func(g model.Segment) string
}

// figures are the columns after the settings: the headline figures of a
// stretch, the receive and send calls named by the process that made them.
var figures = []figure{
	{"throughput", func(g model.Segment) string { return rate(g.ThroughputBps) }},
	{"recv calls per 2 MiB", func(g model.Segment) string {
		return g.ReceiverCallsPer2MiB().Fixed(2) + " (" + g.ReceiverName() + ")"
	}},
	{"send calls per 2 MiB", func(g model.Segment) string {
		return g.SenderCallsPer2MiB().Fixed(2) + " (" + g.SenderName() + ")"
	}},
	{"send EAGAIN per 2 MiB", func(g model.Segment) string { return g.SenderEAGAINPer2MiB().Fixed(2) }},
	{"client wake-ups per 2 MiB", func(g model.Segment) string { return g.Client.VolCSPer2MiB.Fixed(2) }},
	{"CPU s/GiB", func(g model.Segment) string { return g.CPU().SPerGiB.Fixed(3) }},
	{"sndbuf full/empty %", func(g model.Segment) string { return FillCell(g.Fill()) }},
}

// FillCell is a fill's full and empty shares in one cell ("61/37"), n/a
// when not measured.
func FillCell(fl model.Fill) string {
	if !fl.Known() {
		return "n/a"
	}
	return fl.FullPct.Fixed(0) + "/" + fl.EmptyPct.Fixed(0)
}

// SegmentNote is what a segment is, for the line under the table.
const SegmentNote = "a segment is a stretch with unchanged settings; an interval in which a change took effect belongs to none."

// row is one segment of one side.
type row struct {
	side string
	seg  model.Segment
}

// Segments returns the table of a report's segments, and false for a run
// whose settings never changed (each side has one segment: its summary).
func Segments(rep model.Report) (SegmentTable, bool) {
	if !rep.Changed() {
		return SegmentTable{}, false
	}
	var rows []row
	for _, sr := range rep.Sides {
		for _, g := range sr.Segments {
			rows = append(rows, row{sr.Name, g})
		}
	}
	var t SegmentTable
	t.Settings, t.Same = split(stamps(rows))
	t.Head = append([]string{"side", "from–to (s)"}, t.Settings...)
	t.Right = make([]bool, len(t.Head))
	for _, f := range figures {
		t.Head = append(t.Head, f.head)
		t.Right = append(t.Right, true)
	}
	for _, r := range rows {
		cells := []string{r.side, span(r.seg)}
		for _, name := range t.Settings {
			cells = append(cells, cell(r.seg.Settings, name))
		}
		for _, f := range figures {
			cells = append(cells, f.cell(r.seg))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t, true
}

func stamps(rows []row) []model.Stamp {
	out := make([]model.Stamp, len(rows))
	for i, r := range rows {
		out[i] = r.seg.Settings
	}
	return out
}

// split walks the settings table: a setting whose value differs between
// the stamps goes into differ, one that is the same in all into same (as
// "name value"; left out where it does not apply).
func split(sts []model.Stamp) (differ, same []string) {
	for _, st := range model.Settings() {
		vals, carried := values(sts, st.Name)
		switch {
		case !carried:
		case len(vals) > 1:
			differ = append(differ, st.Name)
		case vals[0] != "":
			same = append(same, st.Name+" "+vals[0])
		}
	}
	return differ, same
}

// values are the distinct values of a setting over the stamps, in order
// of first appearance; carried is false when a stamp does not hold the
// setting (one fixed for the run, or the pair's).
func values(sts []model.Stamp, setting string) (vals []string, carried bool) {
	seen := map[string]bool{}
	for _, st := range sts {
		v, ok := st.Text(setting)
		if !ok {
			return nil, false
		}
		if !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	return vals, len(vals) > 0
}

// cell is a setting's value in a row; "-" where it does not apply.
func cell(st model.Stamp, setting string) string {
	if v, _ := st.Text(setting); v != "" {
		return v
	}
	return "-"
}

func span(g model.Segment) string {
	return strconv.FormatFloat(g.From, 'f', 2, 64) + "–" + strconv.FormatFloat(g.To, 'f', 2, 64)
}

// stretch is a run of consecutive samples of a side measured under one
// stamp, and the figures that label it.
type stretch struct {
	stamp model.Stamp
	label model.Figures
}

// measuredUnder is what a side's whole-run summary was measured under:
// the stamps of its samples that moved payload, in time order, each once
// per stretch. A stretch is labelled by its segment's figures (effective
// buffer sizes over the stretch) or, with none (a change in the run's last
// interval), by its last sample's. A report without samples falls back to
// the segments and the summary's own stamp.
func measuredUnder(rep model.Report, sr model.SideReport) []stretch {
	var out []stretch
	for _, s := range rep.Samples {
		if s.Side != sr.ID() || s.Bytes == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].stamp == s.Settings {
			out[n-1].label = s.Figures
			continue
		}
		out = append(out, stretch{s.Settings, s.Figures})
	}
	if len(out) == 0 {
		for _, g := range sr.Segments {
			out = append(out, stretch{g.Settings, g.Figures})
		}
		return append(out, stretch{sr.Summary.Settings, sr.Summary.Figures})
	}
	for i := range out {
		for _, g := range sr.Segments {
			if g.Settings == out[i].stamp {
				out[i].label = g.Figures
			}
		}
	}
	return out
}

// ChangedSettings are the settings, in the settings table's order, whose
// value changed while a side measured: what its whole-run summary mixes.
func ChangedSettings(rep model.Report, sr model.SideReport) []string {
	var sts []model.Stamp
	for _, s := range measuredUnder(rep, sr) {
		sts = append(sts, s.stamp)
	}
	differ, _ := split(sts)
	return differ
}

// Across is a figure's text over the stretches a side measured in, in
// time order, equal neighbours once, joined by arrows ("macos (eff. 8k) →
// 2m (eff. 4m)"): a whole-run summary labelled by what it was measured
// under, not by the setting at its end. A side measured under one setting
// throughout gets its summary's text.
func Across(rep model.Report, sr model.SideReport, text func(f model.Figures) string) string {
	under := measuredUnder(rep, sr)
	if len(under) < 2 {
		return text(sr.Summary.Figures) // one setting throughout: the summary's own
	}
	var parts []string
	for _, s := range under {
		if v := text(s.label); len(parts) == 0 || parts[len(parts)-1] != v {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " → ")
}

// WriteText prints the table for a terminal: the settings that never
// changed on one line, then the rows in aligned columns.
func (t SegmentTable) WriteText(w io.Writer) error {
	if len(t.Same) > 0 {
		fmt.Fprintf(w, "in every segment: %s\n", strings.Join(t.Same, ", "))
	}
	return t.Table.WriteText(w)
}
