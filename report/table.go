// Package report renders every human-readable table of a run or a sweep:
// run's summary, the segments, the markdown of runs show and export, the
// comparison of two runs, a sweep's and an exec sweep's tables, bars and
// CSV. Each table has one definition here, as rows of text cells, and is
// printed for a terminal (WriteText) or as markdown (WriteMarkdown); so a
// figure reads the same wherever it is printed. It reads only the model.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"nbdscope/model"
	"nbdscope/units"
)

// Table is a table as rows of text cells.
type Table struct {
	Head  []string
	Right []bool // right-align column i (in markdown)
	Rows  [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// WriteText prints the table for a terminal: aligned columns two spaces
// apart.
func (t Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Head, "\t")+"\t")
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	return tw.Flush()
}

// WriteMarkdown prints the table as markdown, its columns padded to one
// width so it reads as text too.
func (t Table) WriteMarkdown(w io.Writer) {
	width := make([]int, len(t.Head))
	for i, h := range t.Head {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); i < len(width) && n > width[i] {
				width[i] = n
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if t.Right[i] {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(t.Head)
	var b strings.Builder
	b.WriteString("|")
	for i, n := range width {
		if t.Right[i] {
			b.WriteString(strings.Repeat("-", n+1) + ":|")
		} else {
			b.WriteString(strings.Repeat("-", n+2) + "|")
		}
	}
	fmt.Fprintln(w, b.String())
	for _, r := range t.Rows {
		line(r)
	}
}

// mdEscape keeps free text from breaking a table row.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// ---- cells shared by the tables ----

// gibps is a throughput in GiB/s (unknown stays unknown).
func gibps(f model.Figure) model.Figure {
	if !f.Known() {
		return model.Unknown
	}
	return f / model.GiB
}

// shownUnits is a rate in --rate-unit's unit as a figure (GiB/s when none
// was chosen), for the markdown tables' rate columns and their ratios.
func shownUnits(f model.Figure) model.Figure {
	if shownRate == nil || !f.Known() {
		return gibps(f)
	}
	return f / model.Figure(shownRate.BytesPer)
}

// ratio is b/a as text, "n/a" when either is unknown or a is zero.
func ratio(a, b model.Figure) string { return model.Ratio(a, b).Ratio() }

// withEffective is a requested buffer and, when known, the size the kernel
// gave it: "2m (4m)", or with a label "2m (eff. 4m)".
func withEffective(req string, eff int, label string) string {
	if eff <= 0 {
		return req
	}
	return req + " (" + label + units.FormatSize(int64(eff)) + ")"
}
