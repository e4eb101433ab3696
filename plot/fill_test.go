package plot

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// TestSVGFillChart: a run whose samples carry a send-buffer fill gets a
// fourth chart per side, full and empty, a point per active sample.
func TestSVGFillChart(t *testing.T) {
	rep := fixture()
	active := map[model.SideID]int{}
	for i := range rep.Samples {
		s := &rep.Samples[i]
		s.SetFill(model.Fill{Samples: 40, FullPct: model.Figure(i % 100), EmptyPct: model.Figure(100 - i%100), Bytes: 1000, Limit: 4096})
		if s.Active {
			active[s.Side]++
		}
	}
	root := parseSVG(t, SVG("r", rep))
	charts := root.all("g", "chart")
	if len(charts) != 8 {
		t.Fatalf("%d charts, want 8 (2 sides × 4 figures)", len(charts))
	}
	for _, c := range charts[6:] {
		if c.attr("data-figure") != "fill" {
			t.Fatalf("chart %s/%s, want the fill", c.attr("data-side"), c.attr("data-figure"))
		}
		for _, ser := range c.all("g", "series") {
			if got, want := num(t, ser.attr("data-points")), float64(active[model.SideID(c.attr("data-side"))]); got != want {
				t.Errorf("%s %s: %v points, want %v", c.attr("data-side"), ser.attr("data-metric"), got, want)
			}
		}
	}
}

// TestSVGChartTitlesClearTheirLegend: a chart's bold title ends before
// its legend starts; the fill chart's title ran through "full — empty".
func TestSVGChartTitlesClearTheirLegend(t *testing.T) {
	rep := fixture()
	for i := range rep.Samples {
		rep.Samples[i].SetFill(model.Fill{Samples: 40, FullPct: 50, EmptyPct: 20, Bytes: 1000, Limit: 4096})
	}
	root := parseSVG(t, SVG("r", rep))
	for _, c := range root.all("g", "chart") {
		legends := c.all("g", "legend")
		if len(legends) == 0 {
			continue
		}
		title := c.all("text", "chart-title")[0]
		end := num(t, title.attr("x")) + textWidth(title.text(), 12)*1.1 // bold is about a tenth wider
		for _, l := range legends[0].all("line", "") {
			if x := num(t, l.attr("x1")); x < end {
				t.Errorf("%s/%s: title %q ends at %.0f, past its legend at %.0f", c.attr("data-side"), c.attr("data-figure"), title.text(), end, x)
				break
			}
		}
	}
}

// TestSVGFillAxisEndsAt100: a share of time cannot pass 100%, so the fill
// chart's axis ends there even when the data reaches it (it ran to 125).
func TestSVGFillAxisEndsAt100(t *testing.T) {
	rep := fixture()
	for i := range rep.Samples {
		rep.Samples[i].SetFill(model.Fill{Samples: 40, FullPct: 100, EmptyPct: 0, Bytes: 4096, Limit: 4096})
	}
	root := parseSVG(t, SVG("r", rep))
	for _, c := range root.all("g", "chart") {
		if c.attr("data-figure") != "fill" {
			continue
		}
		ticks := c.all("text", "tick")
		var labels []string
		for _, tk := range ticks {
			if tk.attr("text-anchor") == "end" {
				labels = append(labels, tk.text())
			}
		}
		if got := strings.Join(labels, " "); got != "0 25 50 75 100" {
			t.Errorf("%s: fill axis ticks %q, want 0 25 50 75 100", c.attr("data-side"), got)
		}
	}
}
