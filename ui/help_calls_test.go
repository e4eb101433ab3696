package ui

import (
	"strings"
	"testing"
)

// The headline figure's help says what the figure is, and gives the
// qemu-devel series' figures as the series', not as what this machine
// shows (issue 21, item 3).
func TestHelpCallsFigureLabelsTheSeries(t *testing.T) {
	var calls, series string
	for _, e := range helpEntries() {
		switch {
		case e[0] == "calls/2MiB":
			calls = e[1]
		case strings.Contains(e[1], "~1 receive call per 2 MiB"):
			series = e[1]
		}
	}
	if calls == "" {
		t.Fatal("no calls/2MiB entry in the help")
	}
	if strings.Contains(calls, "~") {
		t.Errorf("the calls/2MiB entry states reference figures as its own: %q", calls)
	}
	if !strings.Contains(calls, "this machine") {
		t.Errorf("the calls/2MiB entry does not say the figure is measured here: %q", calls)
	}
	for _, want := range []string{`"io: Increase unix stream socket buffer size"`, "~10 at Linux's 208k default", "~256 at macOS's 8k", "the series' figures, not this machine's"} {
		if !strings.Contains(series, want) {
			t.Errorf("the series' entry lacks %q: %q", want, series)
		}
	}
	// On screen, as a user reads it at 80 columns.
	h := newHarness(t, Options{}, 80, 24)
	h.press("?", "tab")
	text := strings.Join(h.m.helpLines(80), "\n")
	for _, want := range []string{"series", "qemu-devel"} {
		if !strings.Contains(text, want) {
			t.Errorf("help at 80 columns lacks %q", want)
		}
	}
}

// The help's sndbuf entry names every buffer k stops at, the server's
// receive buffer too (it said "server send, client send, client receive"
// after k had gained a fifth stop).
func TestHelpNamesEveryKStop(t *testing.T) {
	var sndbuf string
	for _, e := range helpEntries() {
		if e[0] == "sndbuf" {
			sndbuf = e[1]
		}
	}
	h := newHarness(t, Options{}, 160, 48)
	seen := map[string]bool{}
	for range numTargets() {
		h.press("k")
		if t := h.m.bufTarget[h.m.focus]; t != targetSender {
			seen[targetName(t)] = true
		}
	}
	if len(seen) != int(numTargets())-1 {
		t.Fatalf("k stopped at %v", seen)
	}
	for name := range seen {
		if !strings.Contains(sndbuf, name) {
			t.Errorf("the help's sndbuf entry does not name k's stop %q: %q", name, sndbuf)
		}
	}
}
