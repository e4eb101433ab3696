package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
)

// Changes at the same moment (a script's two settings at one --at) and
// in the next bucket never collide on the time axis as "BB": the second
// stands on the labels row below the first, as the SVG stacks its
// labels, and a third that touches both joins the first.
func TestMarkersStack(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.feed(80, 20)
	for _, ev := range []model.Event{
		{T: 10, Side: "B", Setting: "sndbuf", From: "default", To: "64k"},
		{T: 10, Side: "B", Setting: "connections", From: "1", To: "2"},
		{T: 10.1, Side: "A", Setting: "sndbuf", From: "default", To: "2m"},
	} {
		h.send(model.Update{Event: &ev})
	}
	lines, axis := timeAxis(h.view())
	if axis < 0 {
		t.Fatalf("no time axis:\n%s", strings.Join(lines, "\n"))
	}
	row, below := []rune(lines[axis]), []rune(lines[axis+1])
	for i := 1; i < len(row); i++ {
		if isMark(row[i]) && isMark(row[i-1]) {
			t.Errorf("markers touch on the axis at column %d: %q", i, lines[axis])
		}
	}
	col := strings.IndexFunc(lines[axis], isMark)
	if col < 0 {
		t.Fatalf("no marker on the axis: %q", lines[axis])
	}
	col = len([]rune(lines[axis][:col]))
	if got := row[col]; got != '*' {
		t.Errorf("the axis marker where A and B met reads %q, want *: %q", got, lines[axis])
	}
	if col >= len(below) || below[col] != 'B' {
		t.Errorf("the second B is not stacked under the first:\n%s\n%s", lines[axis], lines[axis+1])
	}
}

func isMark(r rune) bool { return r == 'A' || r == 'B' || r == '*' }

// A real client (--exec, or e) is restarted after each run, and each
// finished run came as an event: a client of 0.25 s runs put a marker on
// the time axis at each, on two rows, over the axis's tick labels, and
// its runs pushed the user's changes out of the change strip. A run is no
// change: the axis marks the changes alone (here one, B's sndbuf), the
// strip counts the runs in the window, and at 80x24, where no strip
// fits, a run's message does not take the change's place on the status
// line.
func TestClientRunsAreNoMarkers(t *testing.T) {
	for _, size := range [][2]int{{160, 48}, {80, 24}} {
		h := newHarness(t, Options{}, size[0], size[1])
		h.feed(80, 20)
		change := model.Event{T: 12, Side: "B", Setting: "sndbuf", From: "default", To: "64k"}
		h.send(model.Update{Event: &change})
		for i := range 40 {
			run := model.Event{T: 12.1 + 0.2*float64(i), Side: "A", Setting: model.ExecRunEvent, To: "0.243s"}
			h.send(model.Update{Event: &run})
		}
		lines, axis := timeAxis(h.view())
		if axis < 0 {
			t.Fatalf("%dx%d: no time axis:\n%s", size[0], size[1], strings.Join(lines, "\n"))
		}
		marks := strings.Count(lines[axis], "A") + strings.Count(lines[axis], "B") + strings.Count(lines[axis+1], "A") + strings.Count(lines[axis+1], "B")
		if marks != 1 || !strings.Contains(lines[axis], "B") {
			t.Errorf("%dx%d: the axis has %d markers, want B's change alone:\n%s\n%s", size[0], size[1], marks, lines[axis], lines[axis+1])
		}
		v := ansi.Strip(h.view())
		if size[0] >= 160 {
			if strip := lines[axis+2]; !strings.Contains(strip, "B sndbuf default→64k") || !strings.Contains(strip, "A 40 client runs, last 0.243s") {
				t.Errorf("%dx%d: the change strip does not list the change and count the runs: %q", size[0], size[1], strip)
			}
		} else if !strings.Contains(v, "▲ 0:12 B sndbuf default→64k") {
			t.Errorf("%dx%d: the runs took the change's place on the status line:\n%s", size[0], size[1], v)
		}
	}
}

// timeAxis is a screen's plain lines and the index of its last chart's
// time axis, with a line below it for the markers; -1 when none.
func timeAxis(view string) ([]string, int) {
	lines := strings.Split(ansi.Strip(view), "\n")
	axis := -1
	for i, l := range lines {
		if strings.Contains(l, "└") && strings.Contains(l, "┬") {
			axis = i
		}
	}
	if axis+1 >= len(lines) {
		axis = -1
	}
	return lines, axis
}
