package ui

import (
	"strings"
	"testing"
)

func hereEntry(t *testing.T, m *Model) string {
	t.Helper()
	for _, e := range m.figureEntries() {
		if e[0] == hereLabel {
			return e[1]
		}
	}
	t.Fatal("no here entry in the help")
	return ""
}

// TestHereCallsMeasured (issue 24): the help's "here" line gives this
// machine's figures once the run has measured them: each side's receive
// calls per 2 MiB at the buffer it has now, and how full that buffer was;
// before any sample it says where the figures will be. The series' line
// stays the series'.
func TestHereCallsMeasured(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	if got := hereEntry(t, h.m); got != hereCalls {
		t.Errorf("before any sample: %q", got)
	}
	h.feed(8, 5)
	got := hereEntry(t, h.m)
	for _, want := range []string{"10.2 at 208k (A, buffer full 97% / empty 1%)", "1.0 at 416k (B, buffer full 2% / empty 81%)",
		"this machine's, measured now"} {
		if !strings.Contains(got, want) {
			t.Errorf("here line lacks %q: %q", want, got)
		}
	}
	h.press("?", "tab")
	text := strings.Join(h.m.helpLines(160), "\n")
	if !strings.Contains(text, "10.2 at 208k (A, buffer full 97% / empty 1%)") || !strings.Contains(text, "the series' figures, not this machine's") {
		t.Errorf("help at 160 columns:\n%s", text)
	}
}
