package ui

import (
	"reflect"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"nbdscope/model"
)

// Every style of the explorer renders text byte for byte as lipgloss
// does, in colour and without: plain, blank, wide, already styled, and
// the texts that take lipgloss's own path (newlines, tabs).
func TestStyleRenderIsLipgloss(t *testing.T) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	texts := []string{"", "x", " 2.31 GiB/s ", "━━╮ 全角", "\x1b[1mbold\x1b[0m and not", "two\nlines", "a\tb", "a\r\nb"}
	for _, prof := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.Ascii} {
		lipgloss.SetColorProfile(prof)
		st := DefaultStyles()
		for _, sty := range allStyles(st) {
			if !sty.fast {
				t.Errorf("profile %v: a style of colours only renders through lipgloss", prof)
			}
			for _, s := range texts {
				if got, want := sty.Render(s), sty.Style.Render(s); got != want {
					t.Errorf("profile %v: Render(%q) = %q, lipgloss %q", prof, s, got, want)
				}
			}
			if got, want := sty.Render("a", "b"), sty.Style.Render("a", "b"); got != want {
				t.Errorf("profile %v: Render(a, b) = %q, lipgloss %q", prof, got, want)
			}
		}
	}
	for _, sty := range []lipgloss.Style{
		lipgloss.NewStyle().Width(10), lipgloss.NewStyle().PaddingLeft(1), lipgloss.NewStyle().Underline(true),
		lipgloss.NewStyle().Border(lipgloss.NormalBorder()), lipgloss.NewStyle().MaxWidth(3), lipgloss.NewStyle().SetString("v"),
	} {
		if newStyle(sty).fast {
			t.Errorf("a style that lays text out is wrapped: %v", sty)
		}
	}
}

// allStyles is every Style field of st.
func allStyles(st *Styles) []Style {
	var out []Style
	v := reflect.ValueOf(st).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Type() {
		case reflect.TypeFor[Style]():
			out = append(out, f.Interface().(Style))
		case reflect.TypeFor[[2]Style]():
			out = append(out, f.Index(0).Interface().(Style), f.Index(1).Interface().(Style))
		}
	}
	return out
}

// loadedModel is the explorer at 160x48 after 10 s of both sides'
// samples, its styles taken in colour.
func loadedModel() *Model {
	f := newFake()
	m := newModel(f, Options{PresetName: "linux-gap"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	for at := 250 * time.Millisecond; at <= 10*time.Second; at += 250 * time.Millisecond {
		f.at(at, 0)
		for _, side := range []model.SideID{"A", "B"} {
			m.Update(updateMsg{model.Update{Sample: ptr(sample(side, at.Seconds(), true))}})
		}
	}
	return m
}

// renderAllocs is the allocations of one frame of loadedModel.
func renderAllocs() float64 {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	m := loadedModel()
	return testing.AllocsPerRun(20, func() { m.render() })
}

// A frame's styled text is wrapped in codes taken once, not rendered by
// lipgloss cell by cell: a frame allocates far less (counted, not timed).
func TestFrameStylesWrapped(t *testing.T) {
	fast := renderAllocs()
	fastRender = false
	defer func() { fastRender = true }()
	slow := renderAllocs()
	t.Logf("allocations a frame: %.0f wrapped, %.0f through lipgloss (%.2fx)", fast, slow, fast/slow)
	if fast > 0.8*slow {
		t.Errorf("a frame allocates %.0f times with the wraps, %.0f without: want at most 0.8x", fast, slow)
	}
}

// BenchmarkFrame is one frame at 160x48, both sides running, in colour.
func BenchmarkFrame(b *testing.B) {
	for _, fast := range []bool{false, true} {
		name := map[bool]string{false: "lipgloss", true: "wrapped"}[fast]
		b.Run(name, func(b *testing.B) {
			fastRender = fast
			defer func() { fastRender = true }()
			lipgloss.SetColorProfile(termenv.TrueColor)
			defer lipgloss.SetColorProfile(termenv.Ascii)
			m := loadedModel()
			b.ReportAllocs()
			for b.Loop() {
				m.render()
			}
		})
	}
}
