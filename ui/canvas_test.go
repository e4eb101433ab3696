package ui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestCanvasCellKinds: each cell is tagged by what it shows; a baseline
// and markers only take the cells the live series leave blank.
func TestCanvasCellKinds(t *testing.T) {
	// Four cells of y axis, six of plot.
	live := []string{" 1.0┤ ─━  ", " 0.0┤┊   "}
	cv := newCanvas(live, 3, 4, 10) // a third row asciigraph did not give
	cv.underlay([]string{"     ┈┈┉┉ ", "          "})
	cv.mark([]mark{{col: 3, side: -1}, {col: 3, side: 1}, {col: 4, side: 0}})
	type tag struct {
		kind cellKind
		side int
	}
	at := func(r, x int) tag { return tag{cv.rows[r][x].kind, cv.rows[r][x].side} }
	checks := []struct {
		r, x int
		want tag
		ch   rune
	}{
		{0, 0, tag{cellAxis, 0}, ' '},
		{0, 3, tag{cellAxis, 0}, '0'},
		{0, 4, tag{cellPlain, 0}, '┤'},
		{0, 5, tag{cellBase, 0}, '┈'}, // blank in the live plot: the baseline shows
		{0, 6, tag{cellLive, 0}, '─'}, // the live series hides the baseline
		{0, 7, tag{cellLive, 1}, '━'},
		{0, 8, tag{cellBase, 1}, '┉'},
		{0, 9, tag{cellPlain, 0}, ' '},
		{1, 4, tag{cellPlain, 0}, '┤'},
		{1, 5, tag{cellPlain, 0}, '┊'}, // a marker rune of asciigraph's is no marker
		{1, 7, tag{cellMark, -1}, markRune},
		{1, 8, tag{cellMark, 0}, markRune},
		{2, 7, tag{cellMark, -1}, markRune}, // the first marker of a column wins
		{2, 0, tag{cellAxis, 0}, ' '},
	}
	for _, c := range checks {
		if got := at(c.r, c.x); got != c.want || cv.rows[c.r][c.x].r != c.ch {
			t.Errorf("row %d col %d: %q %+v, want %q %+v", c.r, c.x, cv.rows[c.r][c.x].r, got, c.ch, c.want)
		}
	}
	if n := len(cv.rows[2]); n != 10 {
		t.Errorf("missing row is %d cells, want 10", n)
	}
	// Without colour the canvas renders to its runes, blanks trimmed.
	got := cv.render(DefaultStyles())
	wantRows := []string{" 1.0┤┈─━┉", " 0.0┤┊ ┊┊", "       ┊┊"}
	if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("render:\n%q\nwant\n%q", got, wantRows)
	}
}

// TestCanvasStyleRuns: a run of cells of one kind and side is styled once,
// and each kind gets its own style.
func TestCanvasStyleRuns(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := DefaultStyles()
	cv := newCanvas([]string{"  ┤───━━"}, 1, 3, 8)
	got := cv.render(st)[0]
	want := st.Axis.Render("  ┤") + st.Side[0].Render("───") + st.Side[1].Render("━━")
	if got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	for _, c := range []struct {
		k    cellKind
		side int
		want Style
	}{{cellMark, -1, st.Dim}, {cellMark, 1, st.SideFaint[1]}, {cellBase, 0, st.SideFaint[0]}, {cellAxis, 0, st.Axis}} {
		sty, ok := c.k.style(st, c.side)
		if !ok || sty.Render("x") != c.want.Render("x") {
			t.Errorf("kind %d side %d: wrong style", c.k, c.side)
		}
	}
	if _, ok := cellPlain.style(st, 0); ok {
		t.Error("a plain cell is styled")
	}
}

// A run wrapped in its style's codes is what lipgloss renders it as, in
// colour, faint and bold, for runs of glyphs and blanks alike.
func TestStyleWrapIsRender(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	for _, sty := range []lipgloss.Style{
		r.NewStyle().Foreground(lipgloss.Color("#4FC3F7")),
		r.NewStyle().Foreground(lipgloss.Color("#FFB454")).Faint(true),
		r.NewStyle().Bold(true),
		r.NewStyle(),
	} {
		w := wrapOfStyle(sty)
		for _, text := range []string{"━━╮", "   ", "a b", "│"} {
			if got, want := w.open+text+w.close, sty.Render(text); got != want {
				t.Errorf("wrap of %q: %q, lipgloss renders %q", text, got, want)
			}
		}
	}
}
