package plot

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/guptarohit/asciigraph"

	"nbdscope/model"
)

// The terminal comparison of two runs (runs compare): for each side, its
// throughput, receive calls per 2 MiB and (when sampled) how often its
// send buffer was full, in run a and run b drawn one over the other, on one time axis (seconds since each run's start), with the
// changes of both runs marked. Run a is drawn with light lines, run b with
// heavy ones, so the chart reads without colour and survives a pipe.

// Run is a saved run to compare: its name and report.
type Run struct {
	Name   string
	Report model.Report
}

var (
	charsRunA = asciigraph.DefaultCharSet
	charsRunB = asciigraph.CharSet{Horizontal: "━", VerticalLine: "┃", ArcDownRight: "┏", ArcDownLeft: "┓", ArcUpRight: "┗", ArcUpLeft: "┛", EndCap: "╸", StartCap: "╺"}
)

const (
	markRune   = '┊'
	minWidth   = 40 // narrower terminals get this width
	chartLines = 8  // plot rows of a chart
)

// termRow is one chart of a side in the comparison.
type termRow struct {
	m     metric
	title string
}

var termRows = []termRow{
	{mThroughput, "throughput (%s)"},
	{mCalls, "receive calls per 2 MiB of the receiving process"},
	{mFillFull, fillTermTitle},
}

// termMark is a change of run a or b in the comparison, numbered in time
// order across both runs.
type termMark struct {
	n   int
	run int // 0: a, 1: b
	change
}

// Compare draws the comparison of runs a and b in width columns.
func Compare(a, b Run, width int) string {
	width = max(width, minWidth)
	runs := [2]Run{a, b}
	end := span(&a.Report, &b.Report)
	var out []string
	out = append(out, fmt.Sprintf("%s a: %s   %s b: %s   (time since each run's start)",
		legendGlyph(charsRunA), runName(a), legendGlyph(charsRunB), runName(b)))
	for _, id := range []model.SideID{model.SideA, model.SideB} {
		var sds [2]*side
		name := ""
		for i := range runs {
			for _, sd := range sidesOf(&runs[i].Report) {
				if sd.id == id {
					sd := sd
					sds[i] = &sd
					name = cmp.Or(name, sd.name)
				}
			}
		}
		if name == "" {
			continue
		}
		marks := sideMarks(sds)
		out = append(out, "")
		out = append(out, compareSide(name, sds, marks, end, width)...)
	}
	return strings.Join(out, "\n") + "\n"
}

func legendGlyph(cs asciigraph.CharSet) string { return cs.Horizontal + cs.Horizontal }

// runName names a run in the legend, saying when it is partial.
func runName(r Run) string {
	s := r.Name
	if s == "" {
		s = "(unsaved)"
	}
	if r.Report.Partial {
		s += " (partial: " + r.Report.PartialCause() + ")"
	}
	return s
}

// sideMarks numbers the changes of a side in both runs by time.
func sideMarks(sds [2]*side) []termMark {
	var ms []termMark
	for i, sd := range sds {
		if sd == nil {
			continue
		}
		for _, c := range sd.events {
			ms = append(ms, termMark{run: i, change: c})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].T < ms[j].T })
	for i := range ms {
		ms[i].n = i + 1
	}
	return ms
}

// compareSide draws one side's charts, their shared time axis and the
// list of changes.
func compareSide(name string, sds [2]*side, marks []termMark, end float64, width int) []string {
	rows := termRowsOf(sds)
	axes := make([]axis, len(rows))
	labelW, measured := 1, false
	for r, tr := range rows {
		var segs [][]segment
		for _, sd := range sds {
			if sd != nil {
				segs = append(segs, sd.segments(tr.m))
			}
		}
		mx := maxOf(segs...)
		measured = measured || !math.IsNaN(mx)
		axes[r] = makeAxis(tr.m, mx, chartLines/2)
		for _, v := range axes[r].ticks() {
			labelW = max(labelW, len(axes[r].label(v)))
		}
	}
	if !measured {
		return []string{fmt.Sprintf("side %s: no active sample in either run", name)}
	}
	prefix := labelW + 2 // the labels, a blank, the axis column
	plotW := width - prefix - 1
	col := func(t float64) int { return min(max(int(math.Floor(t/end*float64(plotW))), 0), plotW-1) }
	var out []string
	for r, tr := range rows {
		title := tr.title
		if strings.Contains(title, "%s") {
			title = fmt.Sprintf(title, axes[r].unit)
		}
		out = append(out, fmt.Sprintf("side %s · %s   %s a  %s b", name, title, legendGlyph(charsRunA), legendGlyph(charsRunB)))
		out = append(out, plotRows(tr.m, sds, axes[r], labelW, plotW, end, marks, col)...)
	}
	out = append(out, timeAxis(prefix, plotW, end, marks, col)...)
	out = append(out, markList(marks)...)
	return out
}

// plotRows draws one figure of both runs over plotW columns, changes
// marked in the cells the lines leave empty.
func plotRows(m metric, sds [2]*side, ax axis, labelW, plotW int, end float64, marks []termMark, col func(float64) int) []string {
	data := make([][]float64, 2)
	for i, sd := range sds {
		data[i] = make([]float64, plotW)
		for c := range data[i] {
			data[i][c] = math.NaN()
		}
		if sd != nil {
			data[i] = sd.columns(m, end, plotW, ax.div)
		}
	}
	// Rows are a whole number per tick step: every tick row is labelled
	// with its exact value, the rows between stay blank.
	perStep := max(1, int(math.Round(float64(chartLines)/float64(ax.steps()))))
	g := asciigraph.PlotMany(data,
		asciigraph.Height(ax.steps()*perStep),
		asciigraph.LowerBound(0),
		asciigraph.UpperBound(ax.top),
		asciigraph.Offset(0),
		asciigraph.YAxisValueFormatter(func(v float64) string {
			if k := v / ax.step; math.Abs(k-math.Round(k)) > 1e-6 {
				return strings.Repeat(" ", labelW)
			}
			return fmt.Sprintf("%*s", labelW, ax.label(v))
		}),
		asciigraph.SeriesChars(charsRunA, charsRunB),
	)
	var out []string
	for _, line := range strings.Split(g, "\n") {
		// asciigraph pads the labels its own way: find the axis column
		// and lay the row out as label, blank, axis, plot.
		row := []rune(line)
		ac := strings.IndexFunc(line, func(r rune) bool { return r == '┤' || r == '┼' })
		if ac < 0 {
			continue
		}
		ac = utf8.RuneCountInString(line[:ac])
		label := strings.TrimSpace(string(row[:ac]))
		cells := []rune(fmt.Sprintf("%*s ", labelW, label) + string(row[ac:]))
		for len(cells) < labelW+2+plotW {
			cells = append(cells, ' ')
		}
		for _, mk := range marks {
			if x := labelW + 2 + col(mk.T); x < len(cells) && cells[x] == ' ' {
				cells[x] = markRune
			}
		}
		out = append(out, strings.TrimRight(string(cells), " "))
	}
	return out
}

// columns averages metric m of a side's active samples into w columns
// over [0, end], divided by div. A sample fills every column its interval
// [T-Seconds, T] touches, so consecutive samples draw a continuous line;
// columns no sample touches are gaps (NaN).
func (sd side) columns(m metric, end float64, w int, div float64) []float64 {
	cols := NewColumns(0, end, div, w)
	for _, s := range sd.samples {
		if !s.Active {
			continue
		}
		v := value(s, m, sd.workload)
		if math.IsNaN(v) {
			continue
		}
		from := s.T
		if finite(s.Seconds) && s.Seconds > 0 {
			from -= s.Seconds
		}
		cols.Add(from, s.T, v)
	}
	return cols.Means()
}

// timeAxis is the time axis under a side's charts: ticks, the changes'
// numbers at their columns, and the tick labels.
func timeAxis(prefix, plotW int, end float64, marks []termMark, col func(float64) int) []string {
	line := []rune(strings.Repeat("─", plotW))
	lab := []rune(strings.Repeat(" ", prefix+plotW+4))
	step := timeStep(end, max(plotW/8, 1))
	last := -1
	for t := 0.0; t <= end+1e-9; t += step {
		c := col(t)
		line[c] = '┬'
		r := []rune(secs(t))
		start := prefix + c - len(r)/2
		if start <= last || start+len(r) > len(lab) {
			continue
		}
		copy(lab[start:], r)
		last = start + len(r)
	}
	for _, mk := range marks {
		if c := col(mk.T); line[c] == '─' || line[c] == '┬' { // the first of changes in one column
			line[c] = markNumber(mk.n)
		}
	}
	axisLine := strings.Repeat(" ", prefix-1) + "└" + string(line)
	return []string{axisLine, strings.TrimRight(string(lab), " ")}
}

// markNumber is a change's one-cell number on the time axis: 1…9, then
// letters, then '*'.
func markNumber(n int) rune {
	const digits = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	if n >= 1 && n <= len(digits) {
		return rune(digits[n-1])
	}
	return '*'
}

// markList names the changes under the axis: "1 a 4.12s sndbuf 2m→64k".
func markList(marks []termMark) []string {
	if len(marks) == 0 {
		return []string{"changes: none"}
	}
	out := []string{"changes:"}
	for _, mk := range marks {
		who := ""
		if mk.Side == "" {
			who = " (both sides)"
		}
		out = append(out, fmt.Sprintf("  %c  %s %6.2fs  %s%s", markNumber(mk.n), [...]string{"a", "b"}[mk.run], mk.T, eventText(mk.Event), who))
	}
	return out
}
