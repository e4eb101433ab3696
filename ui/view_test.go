package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestLayoutThenDraw: a frame is laid out first and then drawn; drawing
// only reads, so a layout drawn twice gives the same frame and leaves the
// model as it was, and what the layout decided (the change strip, the
// help's scrolling) is what the frame shows.
func TestLayoutThenDraw(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {100, 30}, {160, 48}, {60, 16}} {
		w, hgt := sz[0], sz[1]
		h := newHarness(t, Options{}, w, hgt)
		h.feed(120, 30)
		h.send(model.Update{Event: &model.Event{T: 25, Side: "A", Setting: "connections", From: "1", To: "2"}})
		for _, keys := range [][]string{nil, {"l"}, {"?"}, {"down", "down"}, {"esc", "="}} {
			h.press(keys...)
			sc := h.m.layout(w, hgt)
			off, more, foot := h.m.helpOff, h.m.helpMore, h.m.foot
			first := h.m.draw(sc)
			if again := h.m.draw(sc); again != first {
				t.Errorf("%dx%d %v: the same layout drew two frames", w, hgt, keys)
			}
			if h.m.helpOff != off || h.m.helpMore != more || h.m.foot != foot {
				t.Errorf("%dx%d %v: drawing changed the model", w, hgt, keys)
			}
			if first != h.m.render() {
				t.Errorf("%dx%d %v: render differs from layout+draw", w, hgt, keys)
			}
			// The strip and the status line agree: the event is in one
			// of them, never lost.
			hasStrip := strings.Contains(first, "changes:")
			if sc.strip != hasStrip {
				t.Errorf("%dx%d %v: layout says strip %v, frame has it %v", w, hgt, keys, sc.strip, hasStrip)
			}
			if h.m.state == stNormal && h.m.msg.kind == msgEvent && !sc.strip && !strings.Contains(sc.status, "A connections 1→2") {
				t.Errorf("%dx%d %v: no strip and no event in the status line %q", w, hgt, keys, sc.status)
			}
			if h.m.state == stHelp && sc.help == nil {
				t.Errorf("%dx%d %v: help state without help lines", w, hgt, keys)
			}
		}
	}
}
