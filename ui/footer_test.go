package ui

import (
	"strings"
	"testing"
)

// The README's two main keys, g (the gap) and p (the presets), stay in
// the footer at 80 columns, beside help and quit; the narrow form drops
// the others first.
func TestFooterKeepsGapAndPresetsAt80(t *testing.T) {
	for _, w := range []int{80, 100, 160} {
		h := newHarness(t, Options{}, w, 24)
		foot := lastLine(strings.Split(h.view(), "\n"))
		for _, k := range []string{"g gap", "p presets", "? help", "q quit", "+/-/= sndbuf"} {
			if !strings.Contains(foot, k) {
				t.Errorf("%d columns: the footer %q lacks %q", w, foot, k)
			}
		}
	}
}
