package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// A chart is drawn on a canvas of cells. asciigraph gives plain text
// rows; each cell is then tagged with what it shows, and runs of cells of
// the same kind and side are styled together. The kind decides the
// style, so a colour can never be picked by a stray number.

// cellKind is what a chart cell shows.
type cellKind uint8

const (
	cellPlain cellKind = iota // blank, or a rune of no series: unstyled
	cellAxis                  // the y labels and axis, left of the plot
	cellLive                  // a live series: side A light, B heavy
	cellBase                  // a baseline series, behind the live ones
	cellMark                  // a change's marker; side -1: the pair's
)

// cell is one character of the canvas.
type cell struct {
	r    rune
	kind cellKind
	side int // of a live, baseline or marker cell
}

// canvas is a chart's rows of cells; the first prefix cells of a row are
// the y axis.
type canvas struct {
	rows   [][]cell
	prefix int
}

// newCanvas tags asciigraph's rows (padded or cut to width) for lines rows.
func newCanvas(raw []string, lines, prefix, width int) canvas {
	cv := canvas{rows: make([][]cell, lines), prefix: prefix}
	for r := range cv.rows {
		row := padRunes(raw, r, width)
		cells := make([]cell, width)
		for x, ch := range row {
			k := liveKind(x, prefix, ch)
			cells[x] = cell{r: ch, kind: k}
			if k == cellLive {
				cells[x].side = liveSide(ch)
			}
		}
		cv.rows[r] = cells
	}
	return cv
}

// liveKind tells a cell of the live plot: axis, a series or nothing.
func liveKind(x, prefix int, ch rune) cellKind {
	switch {
	case x < prefix:
		return cellAxis
	case strings.ContainsRune(lightRunes, ch), strings.ContainsRune(heavyRunes, ch):
		return cellLive
	}
	return cellPlain
}

// liveSide tells a series rune's side: B's are heavy.
func liveSide(ch rune) int {
	if strings.ContainsRune(heavyRunes, ch) {
		return 1
	}
	return 0
}

// padRunes is row r of raw as exactly width runes (blank when missing).
func padRunes(raw []string, r, width int) []rune {
	var row []rune
	if r < len(raw) {
		row = []rune(raw[r])
	}
	if len(row) > width {
		row = row[:width]
	}
	for len(row) < width {
		row = append(row, ' ')
	}
	return row
}

// underlay draws a baseline plot (on the same grid) into the plot cells
// the live series leave blank: the baseline is behind them.
func (cv canvas) underlay(braw []string) {
	for r, cells := range cv.rows {
		brow := padRunes(braw, r, len(cells))
		for x := cv.prefix; x < len(cells); x++ {
			if cells[x].r == ' ' && brow[x] != ' ' {
				cells[x] = cell{r: brow[x], kind: cellBase, side: baseSide(brow[x])}
			}
		}
	}
}

// mark puts the change markers into the blank cells of their column.
func (cv canvas) mark(marks []mark) {
	for _, cells := range cv.rows {
		for _, m := range marks {
			x := cv.prefix + m.col
			if cells[x].r == ' ' {
				cells[x] = cell{r: markRune, kind: cellMark, side: m.side}
			}
		}
	}
}

// style is the look of a cell of kind k and side; plain cells have none.
func (k cellKind) style(st *Styles, side int) (lipgloss.Style, bool) {
	switch k {
	case cellAxis:
		return st.Axis.Style, true
	case cellLive:
		return st.Side[side].Style, true
	case cellBase:
		return st.SideFaint[side].Style, true
	case cellMark:
		if side < 0 {
			return st.Dim.Style, true
		}
		return st.SideFaint[side].Style, true
	}
	return lipgloss.Style{}, false
}

// render styles each row, a run of cells of the same kind and side at a
// time, and trims the blanks at the end. A run is wrapped in its style's
// escape codes, taken once per style (styleWrap): lipgloss's Render,
// which measures and walks each string it is given, was half the
// explorer's drawing time.
func (cv canvas) render(st *Styles) []string {
	out := make([]string, 0, len(cv.rows))
	var b strings.Builder
	for _, cells := range cv.rows {
		b.Reset()
		for start := 0; start < len(cells); {
			end := start + 1
			for end < len(cells) && cells[end].kind == cells[start].kind && cells[end].side == cells[start].side {
				end++
			}
			w, styled := st.wrapOf(cells[start].kind, cells[start].side)
			if styled {
				b.WriteString(w.open)
			}
			for _, c := range cells[start:end] {
				b.WriteRune(c.r)
			}
			if styled {
				b.WriteString(w.close)
			}
			start = end
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// styleWrap is what a style puts before and after a single-line text
// without tabs: the text rendered is open+text+close, for every such text
// (a style with colours, bold or faint only: no width, padding or border).
type styleWrap struct{ open, close string }

// wrapOfStyle takes a style's wrap by rendering one marker rune.
func wrapOfStyle(sty lipgloss.Style) styleWrap {
	const marker = "X" // no escape code holds it
	r := sty.Render(marker)
	i := strings.Index(r, marker)
	if i < 0 {
		return styleWrap{}
	}
	return styleWrap{open: r[:i], close: r[i+len(marker):]}
}

// wrapOf is the wrap of a cell of kind k and side, taken once per Styles
// (cells are drawn by the explorer's one goroutine); false for plain
// cells.
func (st *Styles) wrapOf(k cellKind, side int) (styleWrap, bool) {
	key := wrapKey{k, side}
	if w, ok := st.wraps[key]; ok {
		return w, true
	}
	sty, ok := k.style(st, side)
	if !ok {
		return styleWrap{}, false
	}
	if st.wraps == nil {
		st.wraps = map[wrapKey]styleWrap{}
	}
	w := wrapOfStyle(sty)
	st.wraps[key] = w
	return w, true
}

type wrapKey struct {
	kind cellKind
	side int
}
