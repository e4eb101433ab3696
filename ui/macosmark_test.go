package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
)

// While a side runs at macOS's buffer on this kernel, the header says so
// on a line of its own, with the series' 12.6x from a real Mac, whatever
// the message line says meanwhile; it goes when no side is at macOS's
// buffer. Only g's message said it, and the next message took it away.
func TestMacOSMarkWhileInForce(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}, {40, 12}} {
		h := newHarness(t, Options{}, size[0], size[1])
		if v := ansi.Strip(h.view()); strings.Contains(v, "real Mac") {
			t.Errorf("%dx%d: the default pair shows the mark:\n%s", size[0], size[1], v)
		}
		h.press("g")
		h.settle()
		h.press("v") // another message in the status line
		v := ansi.Strip(h.view())
		lines := strings.Split(v, "\n")
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		head := strings.Join(lines[:3], "\n")
		for _, want := range []string{"A: macOS", "Linux", "12.6x"} {
			if !strings.Contains(head, want) {
				t.Errorf("%dx%d: the header lacks %q after g:\n%s", size[0], size[1], want, v)
			}
		}
		if size[0] >= 80 && !strings.Contains(head, "not XNU") {
			t.Errorf("%dx%d: the header does not say not XNU:\n%s", size[0], size[1], head)
		}
		h.press("1", "=")
		h.typeText("2m")
		h.press("enter")
		h.settle()
		if v := ansi.Strip(h.view()); strings.Contains(v, "real Mac") {
			t.Errorf("%dx%d: A back at 2m still shows the mark:\n%s", size[0], size[1], v)
		}
	}
}

// On write sides g's message and the header give the series' figure for
// qemu-img writing from a real Mac (9.2x), not the reading one (12.6x).
func TestMacOSMarkWrites(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	for i := range h.f.cfg.Sides {
		h.f.cfg.Sides[i].Workload = model.WorkWrite
	}
	h.m.base.Cfg = h.f.Config()
	h.m.recompute()
	h.press("g")
	h.settle()
	v := ansi.Strip(h.view())
	if !strings.Contains(v, "9.2x") || strings.Contains(v, "12.6x") {
		t.Errorf("write sides after g: want 9.2x and no 12.6x:\n%s", v)
	}
}
