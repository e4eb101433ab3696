package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestLastTurnBeforeAChangeSaysSo: B paused, then C (connections 2 → 1):
// its panel read "load 1 conn · 4×4m" above "rate 4.09 GiB/s … figures:
// last turn", a turn measured at 2 connections, as if they were the new
// setting's. After a change of the side, its last turn's figures are
// marked as before the change, until its load runs again.
func TestLastTurnBeforeAChangeSaysSo(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := waitingAfterTurn(t, size)
		h.send(model.Update{Event: &model.Event{T: 2.4, Side: "A", Setting: "connections", From: "1", To: "2"}})
		a := panelOf(h.view(), "A")
		if !strings.Contains(a, "2 conns") && !strings.Contains(a, "connections   2") {
			t.Fatalf("%dx%d: A's panel does not show the new setting:\n%s", size[0], size[1], a)
		}
		if !strings.Contains(a, "before the change") || !strings.Contains(a, "1.25 GiB/s") {
			t.Errorf("%dx%d: A's last turn's figures (1.25 GiB/s) are not marked as before the change:\n%s", size[0], size[1], a)
		}
		h.feed(1, 2.75)
		if a := panelOf(h.view(), "A"); strings.Contains(a, "before the change") {
			t.Errorf("%dx%d: A runs again, its figures are still marked as before the change:\n%s", size[0], size[1], a)
		}
	}
}

// TestLastTurnWithoutAChangeIsPlain: a waiting side's last turn with no
// change since is only its last turn.
func TestLastTurnWithoutAChangeIsPlain(t *testing.T) {
	h := waitingAfterTurn(t, [2]int{80, 24})
	h.send(model.Update{Event: &model.Event{T: 2.4, Side: "B", Setting: "connections", From: "1", To: "2"}})
	if a := panelOf(h.view(), "A"); strings.Contains(a, "before the change") || !strings.Contains(a, "last turn") {
		t.Errorf("A's panel, B changed:\n%s", a)
	}
}

// TestChangeBeforeThePauseSaysSo: space then C at once: the change's
// event came while the side's last sample was still an active one, and
// the panel, asked only then, never marked the turn that followed. The
// times decide: the change took effect after the turn's load last ran.
func TestChangeBeforeThePauseSaysSo(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.feed(8, 2)
	h.send(model.Update{Event: &model.Event{T: 2.1, Side: "A", Setting: "connections", From: "1", To: "2"}})
	turn := sample("A", 2, true).Figures
	drain := sample("A", 2.25, false)
	drain.Turn = &turn
	h.send(model.Update{Sample: &drain})
	if a := panelOf(h.view(), "A"); !strings.Contains(a, "before the change") {
		t.Errorf("A's last turn ended before its change:\n%s", a)
	}
}
