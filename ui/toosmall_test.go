package ui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestTooSmallTakesOnlyQuit: while the screen says the terminal is too
// small (20x10), every key but q and ctrl+c is ignored: typed blind, the
// setting keys, the side keys, the prompts' keys, enter and a paste
// change nothing (issue 33: they changed the client sndbuf, the mode and
// the connections); back at 80x24 the explorer is as it was; q quits.
func TestTooSmallTakesOnlyQuit(t *testing.T) {
	h := newHarness(t, Options{LoadPresets: func() ([]PresetItem, error) { return nil, nil }}, 20, 10)
	h.wantView("terminal too small")
	before := fmt.Sprint(h.m.cfg, h.m.paused, h.m.focus, h.m.bufTarget, h.m.state)
	var keys []string
	for r := '!'; r <= '~'; r++ {
		if r != 'q' {
			keys = append(keys, string(r))
		}
	}
	keys = append(keys, "tab", "shift+tab", "space", "enter", "esc", "down", "up", "=", "6", "4", "k", "enter")
	for _, k := range keys {
		if cmd := h.press(k); cmd != nil {
			t.Errorf("key %q at 20x10 returned a command", k)
		}
	}
	h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("cCmM+-wW"), Paste: true})
	h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("cCmM+-wW")})
	h.settle()
	if got := h.f.appliedCopy(); len(got) != 0 || len(h.f.modes) != 0 || len(h.f.pauses) != 0 || len(h.f.restarts) != 0 {
		t.Errorf("keys at 20x10 reached the controller: apply %v, modes %v, pauses %v, restarts %v", got, h.f.modes, h.f.pauses, h.f.restarts)
	}
	if after := fmt.Sprint(h.m.cfg, h.m.paused, h.m.focus, h.m.bufTarget, h.m.state); after != before {
		t.Errorf("keys at 20x10 changed the explorer:\n got %s\nwant %s", after, before)
	}
	h.m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if h.m.state != stNormal || h.m.charts.latency {
		t.Errorf("after the keys at 20x10: state %v, latency chart %v; want normal, off", h.m.state, h.m.charts.latency)
	}
	h.m.Update(tea.WindowSizeMsg{Width: 20, Height: 10})
	h.press("q")
	if !h.m.quitting {
		t.Error("q at 20x10 did not quit")
	}
}
