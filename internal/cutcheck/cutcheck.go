// Package cutcheck finds words and figures that a terminal layout cut
// short. Every cut the explorer's layout makes (ansi.Truncate, the
// bubbles list, a wrap that ran out of lines) leaves an ellipsis where the
// text stopped; the explorer also writes a few ellipses on purpose
// ("applying…", "… starting"). An ellipsis that is none of those is a
// cut: "consume …", "cli snd 208k e…".
//
// The explorer's tests (ui) and its end-to-end tests (e2e) scan the
// screens they draw with it.
package cutcheck

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Sizes are the terminal sizes every screen of the explorer is checked
// at, columns by rows: the smallest supported and a roomy one.
var Sizes = [][2]int{{80, 24}, {160, 48}}

// AtEachSize runs check as a subtest at each of Sizes, named "80x24" and
// so on.
func AtEachSize(t *testing.T, check func(t *testing.T, w, h int)) {
	t.Helper()
	for _, sz := range Sizes {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) { check(t, w, h) })
	}
}

// deliberate are the ellipses the explorer writes itself: work under way
// ("applying…", "loading presets…", "stopping the pair…"), a side still
// starting ("… starting"), a range in a text ("default, 64k … 4m") and the
// help's "--at a.consume=…".
var deliberate = regexp.MustCompile(`(?:applying|stopping|starting|restarting side \S+|loading presets|loading saved runs|loading run \S+|applying preset \S+|stopping the pair)…|… starting|\w … \w|=…\)`)

// Cuts returns each cut found on a screen (one string per row), as
// "row N: …context…", in order; nil when nothing was cut.
func Cuts(rows []string) []string {
	var out []string
	for n, row := range rows {
		ok := map[int]bool{}
		for _, m := range deliberate.FindAllStringIndex(row, -1) {
			for i := m[0]; i < m[1]; i++ {
				ok[i] = true
			}
		}
		for i := 0; i < len(row); {
			j := strings.Index(row[i:], "…")
			if j < 0 {
				break
			}
			at := i + j
			if !ok[at] {
				out = append(out, fmt.Sprintf("row %d: %q", n, context(row, at)))
			}
			i = at + len("…")
		}
	}
	return out
}

// context is up to 24 bytes of row either side of at, on rune boundaries.
func context(row string, at int) string {
	r := []rune(row)
	pos := len([]rune(row[:at]))
	lo, hi := max(pos-24, 0), min(pos+24, len(r))
	return strings.TrimSpace(string(r[lo:hi]))
}
