package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"nbdscope/model"
)

// checkFits fails when a line of v is wider than w or v has more than h
// lines.
func checkFits(t *testing.T, v string, w, h int) {
	t.Helper()
	if v == "" {
		return
	}
	lines := strings.Split(v, "\n")
	if len(lines) > h {
		t.Errorf("%dx%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%dx%d: line %d is %d cells wide: %q", w, h, i, lw, l)
		}
	}
}

// TestNoLineWiderThanTerminal draws every screen state at the sizes that
// matter and checks the width of each line, with colours on too (escape
// sequences must not count, nor break the measurement).
func TestNoLineWiderThanTerminal(t *testing.T) {
	for _, prof := range []termenv.Profile{termenv.Ascii, termenv.TrueColor} {
		for _, sz := range [][2]int{{80, 24}, {100, 30}, {160, 48}} {
			screensFit(t, prof, sz[0], sz[1])
		}
	}
}

func screensFit(t *testing.T, prof termenv.Profile, w, hgt int) {
	name := map[termenv.Profile]string{termenv.Ascii: "ascii", termenv.TrueColor: "truecolor"}[prof]
	t.Run(fmt.Sprintf("%s/%dx%d", name, w, hgt), func(t *testing.T) {
		lipgloss.SetColorProfile(prof)
		defer lipgloss.SetColorProfile(termenv.Ascii)
		h := newHarness(t, Options{
			LoadPresets: func() ([]PresetItem, error) { return testPresets(), nil },
			SavePreset:  func(string, model.Config, string) error { return nil },
		}, w, hgt)
		check := func(what string) {
			t.Helper()
			v := h.view()
			if v == "" {
				t.Fatalf("%s: empty view", what)
			}
			checkFits(t, v, w, hgt)
			// Without colour (NO_COLOR) nothing may emit escapes
			// of its own.
			if prof == termenv.Ascii && strings.Contains(v, "\x1b") {
				t.Errorf("%s: escape sequence without colour: %q", what, v)
			}
			if n := len(strings.Split(v, "\n")); n != hgt {
				t.Errorf("%s: %d lines, want the full %d", what, n, hgt)
			}
		}
		check("empty")
		h.feed(240, 70) // longer than the window: it scrolls
		check("samples")
		h.send(model.Update{Event: &model.Event{T: 40, Side: "B", Setting: "sndbuf", From: "2m", To: "64k"}})
		h.send(model.Update{Event: &model.Event{T: 50, Side: "A", Setting: "request-size", From: "2m", To: "32m"}})
		h.send(model.Update{Warning: &model.Warning{T: 50, Side: "B", Kind: model.WarnClamp,
			Text: "B sndbuf: requested 8m, effective 416k — the kernel limit net.core.wmem_max is lower",
			Fix:  "sudo sysctl -w net.core.wmem_max=8388608  (persist: net.core.wmem_max = 8388608 in /etc/sysctl.d/90-nbdscope.conf)"}})
		h.send(model.Update{Crash: &model.Crash{T: 60, Side: "A", Role: "server", Status: "exit status 2",
			Stderr: []string{strings.Repeat("a very long stderr line ", 20)}}})
		check("warnings")
		h.press("l")
		check("latency")
		h.press("?")
		check("help")
		h.press("esc", "=")
		h.typeText(strings.Repeat("9", 60))
		check("prompt")
		h.press("esc", "p")
		h.m.Update(presetsMsg{items: testPresets()})
		check("picker")
		h.press("esc", "tab", "m")
		h.settle()
		check("concurrent")
		h.m.Update(frameMsg{})
		h.press("q")
		check("quitting")
	})
}
