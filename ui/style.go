package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Style is a lipgloss style whose escape codes are taken once (styleWrap),
// so that rendering a line of text joins three strings: lipgloss's
// Render walks its whole property set, splits, measures and pads every
// string it is given, and the panels and legends render some 200 cells a
// frame (a sixth of the explorer's CPU went to Style.Render). The
// result is byte for byte lipgloss's (TestStyleRenderIsLipgloss); text
// with a newline, carriage return or tab, and any style with a width,
// padding, margin, border or other layout, take lipgloss's own Render.
// Methods that derive a style (Bold, Foreground, …) give a plain
// lipgloss.Style, rendered by lipgloss.
type Style struct {
	lipgloss.Style
	wrap styleWrap
	fast bool // Render may wrap: the style only colours and weights text
}

// newStyle takes sty's escape codes (for the colour profile in effect
// now, as DefaultStyles resolves its colours once).
func newStyle(sty lipgloss.Style) Style {
	return Style{Style: sty, wrap: wrapOfStyle(sty), fast: onlyColours(sty)}
}

// onlyColours reports whether sty renders a single line as its escape
// codes around the text: colours, bold, faint, italic, blink, and no
// property that lays text out or styles spaces apart.
func onlyColours(sty lipgloss.Style) bool {
	top, right, bottom, left := sty.GetPadding()
	mt, mr, mb, ml := sty.GetMargin()
	return sty.GetWidth() == 0 && sty.GetHeight() == 0 && sty.GetMaxWidth() == 0 && sty.GetMaxHeight() == 0 &&
		top+right+bottom+left+mt+mr+mb+ml == 0 && sty.GetBorderStyle() == (lipgloss.Border{}) &&
		!sty.GetBorderTop() && !sty.GetBorderRight() && !sty.GetBorderBottom() && !sty.GetBorderLeft() &&
		!sty.GetInline() && sty.GetTransform() == nil && sty.Value() == "" &&
		!sty.GetUnderline() && !sty.GetStrikethrough() && !sty.GetReverse() &&
		!sty.GetUnderlineSpaces() && !sty.GetStrikethroughSpaces()
}

// fastRender turns the wrap off, for the test that compares the work of
// a frame with and without it.
var fastRender = true

// Render styles the strings joined by spaces, as lipgloss.Style.Render does.
func (s Style) Render(strs ...string) string {
	if !s.fast || !fastRender {
		return s.Style.Render(strs...)
	}
	str := strings.Join(strs, " ") // as lipgloss joins them
	if strings.ContainsAny(str, "\n\r\t") {
		return s.Style.Render(str)
	}
	return s.wrap.open + str + s.wrap.close
}
