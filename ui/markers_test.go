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
	lines := strings.Split(ansi.Strip(h.view()), "\n")
	axis := -1
	for i, l := range lines {
		if strings.Contains(l, "└") && strings.Contains(l, "┬") {
			axis = i
		}
	}
	if axis < 0 || axis+1 >= len(lines) {
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
