package ui

import (
	"strconv"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are every lipgloss style the explorer uses. Colours are adaptive
// (light and dark terminals) and never forced: lipgloss's renderer drops
// them, and bold/faint too, when NO_COLOR is set or the output is not a
// colour terminal. Nothing in the layout depends on colour alone: the
// focused panel has a thick border, side B is drawn with heavy lines, and
// markers carry the side's letter.
type Styles struct {
	Brand     Style
	Badge     Style // mode, state
	Dim       Style
	Label     Style
	Value     Style
	Strong    Style
	NA        Style
	Info      Style
	Warn      Style
	Error     Style
	OK        Style
	Side      [2]Style // the side's colour: text, series, markers
	SideFaint [2]Style // markers in the plot area
	Border    Style    // panel border
	Focus     Style    // focused panel border
	Axis      Style
	Title     Style
	Key       Style
	KeyDesc   Style
	Prompt    Style

	wraps map[wrapKey]styleWrap // the chart cells' escape codes (canvas.go)
}

var (
	colA      = lipgloss.AdaptiveColor{Light: "#006D9C", Dark: "#4FC3F7"}
	colB      = lipgloss.AdaptiveColor{Light: "#B04E00", Dark: "#FFB454"}
	colAccent = lipgloss.AdaptiveColor{Light: "#5B3CC4", Dark: "#B79CFF"}
	colDim    = lipgloss.AdaptiveColor{Light: "#7A7A7A", Dark: "#7C7C7C"}
	colFaint  = lipgloss.AdaptiveColor{Light: "#B0B0B0", Dark: "#4E4E4E"}
	colWarn   = lipgloss.AdaptiveColor{Light: "#8A5A00", Dark: "#E8C14A"}
	colErr    = lipgloss.AdaptiveColor{Light: "#C62828", Dark: "#FF6B6B"}
	colOK     = lipgloss.AdaptiveColor{Light: "#2E7D32", Dark: "#7BD88F"}
)

// DefaultStyles returns the explorer's styles, with their colours resolved
// once for the terminal's colour profile and background: an adaptive hex
// colour is otherwise converted (HSLuv distances) at every Render, a fifth
// of the explorer's own CPU time in 256-colour terminals. It also asks the
// terminal for its background now, before the program reads the keyboard.
func DefaultStyles() *Styles {
	prof, dark := lipgloss.ColorProfile(), lipgloss.HasDarkBackground()
	var (
		colA      = resolveColor(colA, prof, dark)
		colB      = resolveColor(colB, prof, dark)
		colAccent = resolveColor(colAccent, prof, dark)
		colDim    = resolveColor(colDim, prof, dark)
		colFaint  = resolveColor(colFaint, prof, dark)
		colWarn   = resolveColor(colWarn, prof, dark)
		colErr    = resolveColor(colErr, prof, dark)
		colOK     = resolveColor(colOK, prof, dark)
	)
	s := &Styles{}
	st := lipgloss.NewStyle
	ns := newStyle
	s.Brand = ns(st().Bold(true).Foreground(colAccent))
	s.Badge = ns(st().Bold(true))
	s.Dim = ns(st().Foreground(colDim))
	s.Label = ns(st().Foreground(colDim))
	s.Value = ns(st())
	s.Strong = ns(st().Bold(true))
	s.NA = ns(st().Foreground(colDim).Italic(true))
	s.Info = ns(st().Foreground(colAccent))
	s.Warn = ns(st().Foreground(colWarn))
	s.Error = ns(st().Foreground(colErr).Bold(true))
	s.OK = ns(st().Foreground(colOK))
	s.Side = [2]Style{ns(st().Foreground(colA)), ns(st().Foreground(colB))}
	s.SideFaint = [2]Style{ns(st().Foreground(colA).Faint(true)), ns(st().Foreground(colB).Faint(true))}
	s.Border = ns(st().Foreground(colFaint))
	s.Focus = ns(st().Foreground(colAccent))
	s.Axis = ns(st().Foreground(colDim))
	s.Title = ns(st().Bold(true))
	s.Key = ns(st().Foreground(colAccent).Bold(true))
	s.KeyDesc = ns(st().Foreground(colDim))
	s.Prompt = ns(st().Foreground(colAccent).Bold(true))
	return s
}

// resolveColor picks an adaptive colour's shade for the background and
// converts it to the profile's palette.
func resolveColor(ac lipgloss.AdaptiveColor, prof termenv.Profile, dark bool) lipgloss.TerminalColor {
	hex := ac.Light
	if dark {
		hex = ac.Dark
	}
	switch prof {
	case termenv.Ascii:
		return lipgloss.NoColor{}
	case termenv.ANSI, termenv.ANSI256:
		switch c := prof.Convert(termenv.RGBColor(hex)).(type) {
		case termenv.ANSI256Color:
			return lipgloss.Color(strconv.Itoa(int(c)))
		case termenv.ANSIColor:
			return lipgloss.Color(strconv.Itoa(int(c)))
		}
	}
	return lipgloss.Color(hex)
}

// sideStyle is the style of side i, or Dim for a pair-level item.
func (s *Styles) sideStyle(i int) Style {
	if i == 0 || i == 1 {
		return s.Side[i]
	}
	return s.Dim
}
