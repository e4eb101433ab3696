package plot

import (
	"fmt"
	"math"
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
)

// barChart is one chart of a sweep: a bar per size of the value that
// value reads (with min–max where known), on a value axis from 0.
type barChart struct {
	id, title string
	unit      string
	value     func(b sweepBar) (v, lo, hi float64)
	format    func(v float64) string
	height    float64
	xTitle    string // "" for none
}

// barChart draws c with its plot area's top at y0.
func (d *svgDoc) barChart(c barChart, bars []sweepBar, y0 float64) {
	x0 := float64(swLeft)
	mx := math.NaN()
	for _, b := range bars {
		v, _, hi := c.value(b)
		for _, x := range []float64{v, hi} {
			if finite(x) && (math.IsNaN(mx) || x > mx) {
				mx = x
			}
		}
	}
	ax := fitAxis(1, c.unit, mx*1.12, 4) // room above the tallest for its label
	yOf := func(v float64) float64 { return y0 + c.height - v/ax.top*c.height }
	d.f(`<g class="bar-chart" data-figure="%s">`+"\n", c.id)
	d.f(`<text class="chart-title" x="%s" y="%s" font-weight="bold">%s</text>`+"\n", px(24), px(y0-14), esc(c.title))
	d.f(`<g class="axis-y" font-size="11" fill="#333333" data-unit="%s">`+"\n", esc(ax.unit))
	for _, v := range ax.ticks() {
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e4e4e4"/>`, px(x0), px(yOf(v)), px(x0+swPlotW), px(yOf(v)))
		d.f(`<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`+"\n", px(x0-6), px(yOf(v)+4), ax.label(v))
	}
	d.f("</g>\n")
	slot := swPlotW / float64(max(len(bars), 1))
	bw := math.Min(slot*0.58, 72)
	for i, b := range bars {
		cx := x0 + slot*(float64(i)+0.5)
		d.bar(c, b, cx, bw, y0, yOf)
		d.xLabels(b, cx, y0+c.height, c.xTitle != "")
	}
	if c.xTitle != "" {
		d.f(`<text class="axis-title" x="%s" y="%s" text-anchor="middle" fill="#555555">%s</text>`+"\n",
			px(x0+swPlotW/2), px(y0+c.height+80), esc(c.xTitle))
	}
	if math.IsNaN(mx) {
		d.f(`<text class="no-data" x="%s" y="%s" text-anchor="middle" fill="#888888">not measured</text>`+"\n", px(x0+swPlotW/2), px(y0+c.height/2))
	}
	d.f(`<path class="frame" d="M%s %sV%sH%s" fill="none" stroke="#555555"/>`+"\n", px(x0), px(y0), px(y0+c.height), px(x0+swPlotW))
	d.f("</g>\n")
}

// bar draws one size's bar centred on cx, its whisker and its value; the
// optimum gets "optimum" over its value (the fastest of an unjudged sweep
// "fastest"). A value not measured reads n/a.
func (d *svgDoc) bar(c barChart, b sweepBar, cx, bw, y0 float64, yOf func(float64) float64) {
	v, lo, hi := c.value(b)
	base := y0 + c.height
	colour := barColour
	switch {
	case b.best:
		colour = barBest
	case b.near:
		colour = barNearBest
	}
	d.f(`<g class="bar" data-buffer="%s" data-value="%s" data-min="%s" data-max="%s" data-best="%t">`,
		esc(b.buffer), dataNum(v), dataNum(lo), dataNum(hi), b.best)
	if !finite(v) {
		d.f(`<text class="value" x="%s" y="%s" text-anchor="middle" font-size="11" fill="#888888">n/a</text></g>`+"\n", px(cx), px(base-6))
		return
	}
	d.f(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, px(cx-bw/2), px(yOf(v)), px(bw), px(base-yOf(v)), colour)
	top := yOf(v)
	if finite(lo) && finite(hi) {
		cap := bw / 4
		d.f(`<g class="whisker" stroke="%s" stroke-width="1.4"><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/></g>`,
			whiskerColor, px(cx), px(yOf(lo)), px(cx), px(yOf(hi)),
			px(cx-cap), px(yOf(lo)), px(cx+cap), px(yOf(lo)), px(cx-cap), px(yOf(hi)), px(cx+cap), px(yOf(hi)))
		top = math.Min(top, yOf(hi))
	}
	d.f(`<text class="value" x="%s" y="%s" text-anchor="middle" font-size="11" fill="#222222">%s</text>`, px(cx), px(top-5), esc(c.format(v)))
	if b.best && c.xTitle != "" {
		d.f(`<text class="best" x="%s" y="%s" text-anchor="middle" font-size="11" font-weight="bold" fill="%s">%s</text>`, px(cx), px(top-19), barBest, b.bestWord)
	}
	d.f("</g>\n")
}

func dataNum(v float64) string {
	if !finite(v) {
		return ""
	}
	return fmt.Sprintf("%.6g", v)
}

// xLabels writes a size's name under its bar; full: with its effective
// size, how many measurements it had when fewer than asked, and ▲ when
// other processes slowed it.
func (d *svgDoc) xLabels(b sweepBar, cx, base float64, full bool) {
	name := b.buffer
	if b.noisy {
		name = "▲ " + name
	}
	d.f(`<text class="x-label" x="%s" y="%s" text-anchor="middle" font-size="12">%s</text>`+"\n", px(cx), px(base+16), esc(name))
	if !full {
		return
	}
	y := base + 30
	for _, l := range []struct{ class, text string }{{"x-eff", b.eff}, {"x-rate", b.gibps}, {"x-runs", runsLabel(b.runs)}} {
		if l.text != "" {
			d.f(`<text class="%s" x="%s" y="%s" text-anchor="middle" font-size="11" fill="#555555">%s</text>`+"\n", l.class, px(cx), px(y), esc(l.text))
		}
		y += 13
	}
}

// runsLabel flags a size measured once, in a sweep cut short or of one
// repeat: its bar is one measurement, not a median.
func runsLabel(runs int) string {
	if runs == 1 {
		return "1 run"
	}
	return ""
}

// legendItem is one entry of a sweep's legend: a swatch of colour, the
// whisker glyph, or text alone, and its words.
type legendItem struct {
	kind   string // "swatch", "whisker", "text"
	colour string // the swatch's, or the text's
	text   string
}

func (it legendItem) width() float64 {
	w := textWidth(it.text, 12) + 22
	if it.kind != "text" {
		w += 20
	}
	return w
}

// legendLines are the legend's entries, in lines that fit the document.
func legendLines(bars []sweepBar) [][]legendItem {
	whiskers, near, noisy, best := false, false, false, ""
	for _, b := range bars {
		whiskers = whiskers || finite(b.lo)
		near = near || b.near
		noisy = noisy || b.noisy
		if b.best {
			best = b.bestWord
		}
	}
	items := []legendItem{{"swatch", barColour, "median of the runs"}}
	if best != "" {
		items = append(items, legendItem{"swatch", barBest, best})
	}
	if near {
		items = append(items, legendItem{"swatch", barNearBest, "within 5% of the fastest"})
	}
	if whiskers {
		items = append(items, legendItem{"whisker", whiskerColor, "min–max of the runs"})
	} else {
		items = append(items, legendItem{"text", "#555555", "(no min–max: " + noSpreadWhy(bars) + ")"})
	}
	if noisy {
		items = append(items, legendItem{"text", "#C62828", "▲ slowed by other processes"})
	}
	var lines [][]legendItem
	x := 24.0
	for _, it := range items {
		if len(lines) == 0 || x+it.width()-22 > swW-24 {
			lines, x = append(lines, nil), 24
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], it)
		x += it.width()
	}
	return lines
}

// sweepLegend writes the legend's lines from baseline y.
func (d *svgDoc) sweepLegend(lines [][]legendItem, y int) {
	d.f(`<g class="legend" font-size="12">` + "\n")
	for _, line := range lines {
		x := 24.0
		for _, it := range line {
			switch it.kind {
			case "swatch":
				d.f(`<rect x="%s" y="%d" width="14" height="12" fill="%s"/>`, px(x), y-10, it.colour)
			case "whisker":
				d.f(`<g stroke="%s" stroke-width="1.4"><line x1="%s" y1="%d" x2="%s" y2="%d"/><line x1="%s" y1="%d" x2="%s" y2="%d"/><line x1="%s" y1="%d" x2="%s" y2="%d"/></g>`,
					it.colour, px(x+7), y-12, px(x+7), y+2, px(x+3), y-12, px(x+11), y-12, px(x+3), y+2, px(x+11), y+2)
			}
			tx, fill := x+20, ""
			if it.kind == "text" {
				tx, fill = x, ` fill="`+it.colour+`"`
			}
			d.f(`<text x="%s" y="%d"%s>%s</text>`+"\n", px(tx), y, fill, esc(it.text))
			x += it.width()
		}
		y += 18
	}
	d.f("</g>\n")
}

// noSpreadWhy says why a sweep's bars have no whiskers.
func noSpreadWhy(bars []sweepBar) string {
	for _, b := range bars {
		if b.runs > 1 {
			return "the sweep kept medians only"
		}
	}
	return "one measurement per size"
}

// sweepNotes are the lines under the charts: the fastest size, how busy
// other processes were, and what the figures are.
func sweepNotes(sw *model.SweepReport, bars []sweepBar) []string {
	var out []string
	// The optimum's verdict, in the words every output uses (phrase.OptimumSaid).
	switch o := sw.Optimum; {
	case o != nil && o.Verdict.Kind == model.OptimumUnjudged:
		out = append(out, wrap(fmt.Sprintf("optimum: not judged — %s is the fastest, %s GiB/s, %s; within 5%%: %s; %s", o.Buffer,
			(o.ThroughputBps/model.GiB).Fixed(2), svgVsDefault(o), strings.Join(o.Within5Pct, ", "), phrase.OptimumUnjudgedWhy), 150)...)
	case o == nil || o.Verdict.Kind != model.OptimumClear:
		out = append(out, wrap("optimum: "+phrase.OptimumSaid(o), 150)...)
	default:
		out = append(out, wrap(fmt.Sprintf("optimum: %s; %s GiB/s, %s; within 5%%: %s", phrase.OptimumSaid(o),
			(o.ThroughputBps/model.GiB).Fixed(2), svgVsDefault(o), strings.Join(o.Within5Pct, ", ")), 150)...)
	}
	out = append(out, otherCPUNote(sw.Rows)...)
	if x := sw.Spec.Exec; x != nil && x.Note != "" {
		out = append(out, "note: "+x.Note)
	}
	what := "time: wall time of each run of the command; "
	if sw.Spec.Exec == nil {
		what = "time: the measured time of each measurement's payload; "
	}
	out = append(out, wrap(what+"send calls per 2 MiB: data-socket send calls of the process sending the bulk data, per 2 MiB of payload, "+
		"as nbdscope counts them (n/a where that process is not nbdscope's to count).", 150)...)
	return out
}

// svgVsDefault is the optimum against the default, as the sweep's
// optimum line says it.
func svgVsDefault(o *model.SweepOptimum) string {
	switch {
	case o.Buffer == model.BufDefaultName:
		return "the default (the OS's own size)"
	case !o.Verdict.VsDefault.HasData():
		return "the default was not swept"
	}
	return o.Verdict.VsDefault.Cell() + " the default's throughput"
}

// otherCPUNote says how busy other processes kept the machine during the
// measurements, and which sizes they slowed (▲ on the chart).
func otherCPUNote(rows []model.SweepRow) []string {
	worst, noisy, measured := model.OtherCPU(rows)
	switch {
	case !measured:
		return nil
	case len(noisy) > 0:
		return wrap(fmt.Sprintf("▲ other processes kept up to %s cores busy during the measurements of %s: those bars are slowed by them",
			worst.Fixed(2), strings.Join(noisy, ", ")), 150)
	}
	return []string{fmt.Sprintf("other processes: at most %s cores busy during any measurement (quiet)", worst.Fixed(2))}
}
