package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
)

// TestFillRowNamesSource: the panel's fill row says what measured the
// fill, at 80x24 in the row's label ("fill k", "fill e", "fill s") and at
// 160x48 beside the gauge ("· kernel", "· kernel events", "· sampled:
// TCP"), each panel within its width.
func TestFillRowNamesSource(t *testing.T) {
	cases := []struct {
		w, h         int
		srcA         string
		wantA, wantB string
	}{
		{80, 24, model.FillSourceKernel, "fill k  ", "fill s  "},
		{160, 48, model.FillSourceKernel, "· kernel", "· sampled: TCP"},
		{80, 24, model.FillSourceEvents, "fill e  ", "fill s  "},
		{160, 48, model.FillSourceEvents, "· kernel events", "· sampled: TCP"},
	}
	for _, c := range cases {
		h := newHarness(t, Options{}, c.w, c.h)
		for i := 1; i <= 12; i++ {
			a, b := sample("A", float64(i)*0.25, true), sample("B", float64(i)*0.25, true)
			a.SndBufFillSource = c.srcA
			b.SndBufFillSource, b.SndBufFillSampled = model.FillSourceSampler, model.FillSampledTCP
			a, b = withRecent(a), withRecent(b)
			h.m.Update(updateMsg{model.Update{Sample: &a}})
			h.m.Update(updateMsg{model.Update{Sample: &b}})
		}
		h.m.Update(frameMsg{})
		v := h.view()
		for _, want := range []string{c.wantA, c.wantB} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: the panel's fill row lacks %q:\n%s", c.w, c.h, want, v)
			}
		}
		for i, line := range strings.Split(v, "\n") {
			if w := ansi.StringWidth(line); w > c.w {
				t.Errorf("%dx%d: line %d is %d wide: %q", c.w, c.h, i, w, line)
			}
		}
	}
}
