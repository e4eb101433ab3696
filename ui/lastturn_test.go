package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestWaitingSideShowsItsLastTurn: a side that waits its turn shows its
// last turn's figures over the whole turn (the sample's Turn, which the
// run's summary agrees with), named as such, not the drain sample's own
// (here 0.43 receive calls per 2 MiB) nor the turn's last active sample's
// alone (10.2). Back on its turn, it shows its live figures again.
func TestWaitingSideShowsItsLastTurn(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := waitingAfterTurn(t, size)
		v := h.view()
		a := panelOf(v, "A")
		if !strings.Contains(a, "3.00") || !strings.Contains(a, "1.25 GiB/s") || !strings.Contains(a, "last turn") ||
			strings.Contains(a, "0.43") || strings.Contains(a, "10.2") {
			t.Errorf("%dx%d: waiting A's panel does not show its last turn's figures (3.00 calls, 1.25 GiB/s, named last turn):\n%s", size[0], size[1], v)
		}
		h.feed(1, 2.5)
		if a := panelOf(h.view(), "A"); strings.Contains(a, "last turn") || !strings.Contains(a, "10.2") {
			t.Errorf("%dx%d: A on its turn again does not show its live figures:\n%s", size[0], size[1], h.view())
		}
	}
}

// waitingAfterTurn is a harness at size whose side A has just ended its
// turn: its last sample is the drain (0.43 receive calls per 2 MiB), its
// turn's figures are 3.00 calls and 1.25 GiB/s, and its last active
// sample's (those sample gives) 10.2 calls and 1.80 GiB/s.
func waitingAfterTurn(t *testing.T, size [2]int) *harness {
	h := newHarness(t, Options{}, size[0], size[1])
	h.feed(8, 2)
	turn := sample("A", 2, true).Figures
	turn.Client.RecvCallsPer2MiB, turn.ThroughputBps = 3.0, model.Figure(1.25*(1<<30))
	drain := sample("A", 2.25, false)
	drain.Client.RecvCallsPer2MiB, drain.Turn = 0.43, &turn
	h.send(model.Update{Sample: &drain})
	return h
}

// panelOf is side's panel on a screen: the panels sit side by side, A's
// the left half of the lines down to their bottom border (the charts'
// legends below name the latest sample's figures).
func panelOf(view, side string) string {
	var out []string
	for _, l := range strings.Split(view, "\n") {
		r := []rune(l)
		half := len(r) / 2
		if side == "A" {
			out = append(out, string(r[:half]))
		} else {
			out = append(out, string(r[half:]))
		}
		if strings.HasPrefix(l, "┗") || strings.HasPrefix(l, "╰") {
			break
		}
	}
	return strings.Join(out, "\n")
}

// TestWaitingSidesLegendShowsItsLastTurn: the charts' legends of a side
// that waits its turn show the figures its panel shows, its last turn's
// over the whole turn, and say so ("last turn"): they showed the turn's
// last active sample (1.80 GiB/s, 10.2 calls), unlabelled, beside a panel
// that said 1.25 and 3.00. The running side's legend is its latest sample,
// unmarked; back on its turn, the side's is again.
func TestWaitingSidesLegendShowsItsLastTurn(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := waitingAfterTurn(t, size)
		v := h.view()
		for _, c := range []struct{ title, turn, sample string }{{"throughput", "A last turn ── 1.25", "1.80"}, {"syscalls", "A last turn ── 3.00", "10.2"}} {
			line := lineStarting(v, c.title)
			if !strings.Contains(line, c.turn) || strings.Contains(line, c.sample) || strings.Count(line, "last turn") != 1 {
				t.Errorf("%dx%d: the %s legend while A waits is %q: want %q, once, not its last sample's %s", size[0], size[1], c.title, line, c.turn, c.sample)
			}
		}
		h.feed(1, 2.5)
		if line := lineStarting(h.view(), "throughput"); strings.Contains(line, "last turn") || !strings.Contains(line, "A ── ") {
			t.Errorf("%dx%d: A on its turn again: the throughput legend is %q, want its latest sample, unmarked", size[0], size[1], line)
		}
	}
}

// lineStarting is the first line of view that starts with prefix, or "".
func lineStarting(view, prefix string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

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

// A waiting side's panel and its fill chart's legend show one fill: the
// panel's (its last turn's, as the legend's other figures are). The
// panel read "full 40% empty 55%" from its last active samples, summed
// by itself, while the legend read "full 48 ┄┄ empty 46", the turn's.
func TestWaitingSidesFillPanelAndLegendAgree(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	for i := 1; i <= 8; i++ {
		a := sample("A", float64(i)*0.25, true)
		a.SetFill(model.Fill{Samples: 50, FullPct: 40, EmptyPct: 55, Bytes: 80000, Limit: 212992})
		h.send(model.Update{Sample: ptr(withRecent(a))})
	}
	turn := sample("A", 2, true).Figures
	turn.SetFill(model.Fill{Samples: 400, FullPct: 48, EmptyPct: 46, Bytes: 100000, Limit: 212992})
	drain := sample("A", 2.25, false)
	drain.Turn = &turn
	h.send(model.Update{Sample: &drain})
	for range 4 {
		h.press("v") // to the fill chart, the last
	}
	v := h.view()
	a := panelOf(v, "A")
	if !strings.Contains(a, "full 48%") || !strings.Contains(a, "empty 46%") {
		t.Errorf("waiting A's panel does not show its turn's fill (full 48%%, empty 46%%):\n%s", a)
	}
	if !strings.Contains(v, "full 48") || !strings.Contains(v, "empty 46") || strings.Contains(v, "full 40") {
		t.Errorf("the fill legend does not show A's panel's fill (full 48, empty 46):\n%s", v)
	}
}

// TestLastTurnIsTheClientsThatRanIt: A waits after a turn of our load
// (3.00 receive calls per 2 MiB, 1.25 GiB/s, latency and errors seen),
// then e switches it to a real client. Its panel showed our load's last
// turn under the new client's command ("exec nbdcopy …", "figures: its
// last turn, before the change"), and its legends "A last turn 1.25", as
// if nbdcopy had measured them. A side's figures are its runner's: until
// the new client runs, there are none, and the border says why; its own
// turn's are shown once it has had one, and our load's again once the
// side is switched back.
func TestLastTurnIsTheClientsThatRanIt(t *testing.T) {
	const cmd = "nbdcopy {uri} null:"
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := waitingAfterTurn(t, size)
		h.press("1", "e")
		h.submit(cmd)
		if line := lineStarting(h.view(), "throughput"); strings.Contains(line, "A last turn") {
			t.Errorf("%dx%d: at e, before A's next sample, the throughput legend gives our load's last turn to nbdcopy: %q", size[0], size[1], line)
		}
		h.send(model.Update{Event: &model.Event{T: 2.4, Side: "A", Setting: model.SetExec, From: "", To: cmd}})
		wait := sample("A", 2.5, false)
		wait.Settings = model.StampOf(h.f.Config().Sides[0])
		wait.Turn = nil // the meter's turn starts again at a change: none yet
		h.send(model.Update{Sample: &wait})
		v := h.view()
		a := panelOf(v, "A")
		if !strings.Contains(a, "nbdcopy") || strings.Contains(a, "3.00") || strings.Contains(a, "1.25 GiB/s") ||
			strings.Contains(a, "last turn") || !strings.Contains(a, "none yet") {
			t.Errorf("%dx%d: A switched to nbdcopy shows our load's last turn (3.00 calls, 1.25 GiB/s), or not why it has none:\n%s", size[0], size[1], v)
		}
		if line := lineStarting(v, "throughput"); strings.Contains(line, "A last turn") || !strings.Contains(line, "A ── n/a") {
			t.Errorf("%dx%d: the throughput legend gives our load's figures to nbdcopy: %q", size[0], size[1], line)
		}
		// nbdcopy ran before its first active sample (its start, on the
		// other side's turn): that turn is after the switch, not before.
		early := sample("A", 2.6, false)
		early.Settings, early.Turn.Settings = wait.Settings, wait.Settings
		h.send(model.Update{Sample: &early})
		if a := panelOf(h.view(), "A"); !strings.Contains(a, "last turn") || strings.Contains(a, "before the change") {
			t.Errorf("%dx%d: nbdcopy's own first turn is not shown as its last turn, or as before its switch:\n%s", size[0], size[1], h.view())
		}
		// nbdcopy's own turn, then its drain: its figures are shown, as
		// its last turn's.
		run := sample("A", 2.75, true)
		run.Settings, run.Client.RecvCallsPer2MiB = wait.Settings, 32.5
		h.send(model.Update{Sample: &run})
		turn := run.Figures
		drain := sample("A", 3, false)
		drain.Settings, drain.Turn = wait.Settings, &turn
		h.send(model.Update{Sample: &drain})
		if a := panelOf(h.view(), "A"); !strings.Contains(a, "32.5") || !strings.Contains(a, "last turn") || strings.Contains(a, "none yet") {
			t.Errorf("%dx%d: A after nbdcopy's turn does not show it as its last turn:\n%s", size[0], size[1], h.view())
		}
	}
}
