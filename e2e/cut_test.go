package e2e

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"nbdscope/internal/cutcheck"
)

// TestNoWordCut runs the explorer at 80x24 and 160x48 and scans its real
// screens for words and figures the layout cut short (issue 21, item 11)
// in the states a new user meets: the default screen, the preset picker,
// the save prompt refusing a bad name, and a side whose load is a real
// client (e).
func TestNoWordCut(t *testing.T) {
	underTmuxAtEachSize(t, noWordCut)
}

func noWordCut(t *testing.T, w, h int) {
	tm := startTerm(t, w, h)
	check := func(state string, rows []string) {
		t.Helper()
		if cuts := cutcheck.Cuts(rows); cuts != nil {
			t.Errorf("%dx%d %s: cut short:\n  %s\nscreen:\n%s", w, h, state, strings.Join(cuts, "\n  "), strings.Join(rows, "\n"))
		}
	}
	screen := func(rows []string) string { return strings.Join(rows, "\n") }

	rows := tm.waitFor("data moving on both sides", func(rows []string) bool {
		p, err := panels(rows, w)
		return err == nil && p[0].rate > 0 && p[1].rate > 0
	})
	check("default", rows)

	tm.keys("p")
	rows = tm.waitFor("the preset picker", func(rows []string) bool {
		return strings.Contains(screen(rows), "presets — enter applies") && strings.Contains(screen(rows), "linux-gap (built-in)")
	})
	check("presets picker", rows)
	tm.keys("Escape")
	tm.waitFor("the panels again", func(rows []string) bool { return !strings.Contains(screen(rows), "presets — enter") })

	tm.keys("s")
	tm.waitFor("the save prompt", func(rows []string) bool { return strings.Contains(screen(rows), "save preset + run as:") })
	tm.typeText("bad name!")
	tm.keys("Enter")
	rows = tm.waitFor("the save prompt's error", func(rows []string) bool { return strings.Contains(screen(rows), "invalid name") })
	check("long save-name error", rows)
	if s := screen(rows); !strings.Contains(s, "starting with a letter or digit") {
		t.Errorf("%dx%d: the save-name error is not shown whole:\n%s", w, h, s)
	}
	tm.keys("Escape")
	tm.waitFor("the save prompt closed", func(rows []string) bool { return !strings.Contains(screen(rows), "save preset + run as:") })

	// A real client as side A's load: nbdcopy where it is installed,
	// else a command every system has (its panel shows the command all
	// the same).
	client := "sleep 1"
	if _, err := exec.LookPath("nbdcopy"); err == nil {
		client = "nbdcopy {uri} null:"
	}
	tm.keys("1", "e")
	tm.waitFor("the exec prompt", func(rows []string) bool { return strings.Contains(screen(rows), "A exec = ") })
	tm.typeText(client)
	tm.keys("Enter")
	rows = tm.waitFor("A's panel showing the client's command", func(rows []string) bool {
		s := screen(rows)
		return !strings.Contains(s, "A exec = ") && regexp.MustCompile(`exec +`+regexp.QuoteMeta(client)).MatchString(s)
	})
	check("exec side", rows)
	// Our load's settings are not shown for the real client: the load
	// row (narrow) or the connections row (wide) is gone from A's half.
	for _, r := range rows {
		left := []rune(r)
		left = left[:min(len(left), w/2)]
		if l := string(left); strings.Contains(l, "load    ") || strings.Contains(l, "connections   ") || strings.Contains(l, "consume") {
			t.Errorf("%dx%d: A's panel shows our load's settings for a real client: %q\n%s", w, h, l, screen(rows))
			break
		}
	}
	tm.keys("q")
	if st := tm.waitExit(); st != "exit status 0" {
		t.Errorf("nbdscope ended with %s; last screen:\n%s", st, tm.last)
	}
}
