// Package ansisvg draws a terminal screen, as tmux's `capture-pane -e -p`
// prints it (text with SGR colour sequences), as an SVG document: the
// README's screenshot is made from the real program this way, so it can be
// made again after any change to the explorer (docs/screenshot.sh), with
// no browser and nothing but rsvg-convert to turn it into a PNG.
package ansisvg

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// Cell geometry for DejaVu Sans Mono at 14 px: the advance is 0.602 em.
const (
	fontSize = 14
	cellW    = 8.43
	cellH    = 16.3
	pad      = 12
)

// Default colours: a dark terminal.
const (
	defaultFG = "#d0d0d0"
	defaultBG = "#1c1c1c"
)

// style is the SGR state that applies to a run of cells.
type style struct {
	fg, bg string // "" for the default
	attrs  attr
}

// attr is a set of SGR text attributes.
type attr uint8

const (
	attrBold attr = 1 << iota
	attrFaint
	attrItalic
	attrUnderline
	attrReverse
)

// sgrSets are the SGR codes that set attributes, sgrClears those that
// clear them (22 is "normal intensity": neither bold nor faint).
var (
	sgrSets   = map[int]attr{1: attrBold, 2: attrFaint, 3: attrItalic, 4: attrUnderline, 7: attrReverse}
	sgrClears = map[int]attr{22: attrBold | attrFaint, 23: attrItalic, 24: attrUnderline, 27: attrReverse}
)

// svgAttrs are the SVG text attributes that draw each SGR attribute
// (reverse is drawn by swapping the colours).
var svgAttrs = []struct {
	a   attr
	svg string
}{
	{attrBold, ` font-weight="bold"`},
	{attrFaint, ` opacity="0.6"`},
	{attrItalic, ` font-style="italic"`},
	{attrUnderline, ` text-decoration="underline"`},
}

// cell is one character position of the screen.
type cell struct {
	r rune
	s style
}

// Render turns captured terminal text into an SVG of cols×rows cells; a
// longer line is cut at cols, missing rows are blank.
func Render(captured string, cols, rows int) string {
	grid := parse(captured, cols, rows)
	var b strings.Builder
	w := float64(cols)*cellW + 2*pad
	h := float64(rows)*cellH + 2*pad
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="6" fill="%s"/>`+"\n", defaultBG)
	fmt.Fprintf(&b, `<g font-family="DejaVu Sans Mono, Menlo, monospace" font-size="%d" xml:space="preserve">`+"\n", fontSize)
	for y, line := range grid {
		drawBackgrounds(&b, line, y)
		drawText(&b, line, y)
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

// parse lays the captured text out on a grid, applying SGR sequences and
// dropping any other escape sequence.
func parse(captured string, cols, rows int) [][]cell {
	grid := make([][]cell, rows)
	var cur style
	lines := strings.Split(strings.TrimSuffix(captured, "\n"), "\n")
	for y := 0; y < rows; y++ {
		line := make([]cell, cols)
		for x := range line {
			line[x] = cell{r: ' ', s: cur}
		}
		if y < len(lines) {
			cur = layLine(line, lines[y], cur)
		}
		grid[y] = line
	}
	return grid
}

// layLine fills line with text, returning the style in force at its end
// (tmux carries attributes across lines).
func layLine(line []cell, text string, cur style) style {
	x := 0
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if rs[i] == 0x1b {
			i = escape(rs, i, &cur)
			continue
		}
		if x < len(line) {
			line[x] = cell{r: rs[i], s: cur}
		}
		x++
	}
	// The rest of the line keeps the background in force, as a terminal
	// clears it.
	for ; x < len(line); x++ {
		line[x] = cell{r: ' ', s: style{bg: cur.bg, attrs: cur.attrs & attrReverse}}
	}
	return cur
}

// escape consumes the escape sequence starting at rs[i] (ESC) and returns
// the index of its last rune; an SGR sequence updates cur.
func escape(rs []rune, i int, cur *style) int {
	if i+1 >= len(rs) || rs[i+1] != '[' {
		return i + 1
	}
	j := i + 2
	for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
		j++
	}
	if j < len(rs) && rs[j] == 'm' {
		applySGR(string(rs[i+2:j]), cur)
	}
	return j
}

// applySGR applies one "ESC [ params m" sequence.
func applySGR(params string, cur *style) {
	ps := strings.Split(params, ";")
	for k := 0; k < len(ps); k++ {
		n, _ := strconv.Atoi(ps[k]) // "" is 0: a reset
		switch {
		case n == 0:
			*cur = style{}
		case sgrSets[n] != 0:
			cur.attrs |= sgrSets[n]
		case sgrClears[n] != 0:
			cur.attrs &^= sgrClears[n]
		case n == 38 || n == 48:
			var c string
			c, k = extendedColour(ps, k)
			if n == 38 {
				cur.fg = c
			} else {
				cur.bg = c
			}
		default:
			applyBasicColour(n, cur)
		}
	}
}

// applyBasicColour applies a 16-colour code: foreground 30-37, bright
// 90-97 and 39 (the default); background the same plus 10. Any other
// code is one this renderer does not draw (blink, conceal, ...).
func applyBasicColour(n int, cur *style) {
	target := &cur.fg
	if n >= 40 && n <= 49 || n >= 100 && n <= 107 {
		target, n = &cur.bg, n-10
	}
	switch {
	case n >= 30 && n <= 37:
		*target = palette16[n-30]
	case n >= 90 && n <= 97:
		*target = palette16[n-90+8]
	case n == 39:
		*target = ""
	}
}

// extendedColour reads "38;5;N" or "38;2;R;G;B" starting at ps[k] and
// returns the colour and the index of the last parameter used.
func extendedColour(ps []string, k int) (string, int) {
	if k+2 < len(ps) && ps[k+1] == "5" {
		n, _ := strconv.Atoi(ps[k+2])
		return xterm256(n), k + 2
	}
	if k+4 < len(ps) && ps[k+1] == "2" {
		r, _ := strconv.Atoi(ps[k+2])
		g, _ := strconv.Atoi(ps[k+3])
		bl, _ := strconv.Atoi(ps[k+4])
		return fmt.Sprintf("#%02x%02x%02x", r&255, g&255, bl&255), k + 4
	}
	return "", len(ps)
}

// colours resolves a style's foreground and background, reverse applied.
func (s style) colours() (fg, bg string) {
	fg, bg = s.fg, s.bg
	if fg == "" {
		fg = defaultFG
	}
	if s.attrs&attrReverse != 0 {
		if bg == "" {
			bg = defaultBG
		}
		fg, bg = bg, fg
	}
	return fg, bg
}

// drawBackgrounds draws one rectangle per run of cells with the same
// non-default background.
func drawBackgrounds(b *strings.Builder, line []cell, y int) {
	for x := 0; x < len(line); {
		_, bg := line[x].s.colours()
		end := x + 1
		for end < len(line) {
			if _, bg2 := line[end].s.colours(); bg2 != bg {
				break
			}
			end++
		}
		if bg != "" {
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
				pad+float64(x)*cellW, pad+float64(y)*cellH, float64(end-x)*cellW, cellH, bg)
		}
		x = end
	}
}

// drawText writes each cell that is not blank at its own column, grouped in
// runs of one style; a run is placed cell by cell (one x per character) so
// that a glyph the font draws wider or narrower cannot shift the columns.
func drawText(b *strings.Builder, line []cell, y int) {
	for x := 0; x < len(line); {
		s := line[x].s
		end := x + 1
		for end < len(line) && line[end].s == s {
			end++
		}
		writeRun(b, line[x:end], x, y, s)
		x = end
	}
}

func writeRun(b *strings.Builder, run []cell, x0, y int, s style) {
	text := make([]rune, len(run))
	xs := make([]string, len(run))
	blank := true
	for i, c := range run {
		text[i] = c.r
		xs[i] = strconv.FormatFloat(pad+float64(x0+i)*cellW, 'f', 1, 64)
		blank = blank && c.r == ' '
	}
	if blank {
		return
	}
	fg, _ := s.colours()
	attrs := fmt.Sprintf(`fill="%s"`, fg)
	for _, a := range svgAttrs {
		if s.attrs&a.a != 0 {
			attrs += a.svg
		}
	}
	baseline := pad + float64(y)*cellH + 13.0 // the font's ascent at 14 px
	fmt.Fprintf(b, `<text x="%s" y="%.1f" %s>%s</text>`+"\n",
		strings.Join(xs, " "), baseline, attrs, html.EscapeString(string(text)))
}

// palette16 is xterm's 16 colours.
var palette16 = [16]string{
	"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
	"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
}

// xterm256 is the colour of xterm's 256-colour index n.
func xterm256(n int) string {
	switch {
	case n < 0 || n > 255:
		return ""
	case n < 16:
		return palette16[n]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	default:
		g := 8 + 10*(n-232)
		return fmt.Sprintf("#%02x%02x%02x", g, g, g)
	}
}
