package plot

import (
	"encoding/xml"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"nbdscope/model"
	"nbdscope/shellword"
	"nbdscope/units"
)

// The SVG export: one column per side (A left, B right) and one row per
// figure (throughput, receive calls per 2 MiB, CPU), all on one time axis
// and with one value scale per row, so that the sides compare at a glance.
// Changes are dashed vertical lines, numbered in every chart and named in
// the top one and in the list under the charts. The caption says where
// and how the run was made. The document is self-contained (no fonts,
// scripts or links) so it can be pasted into a bug report or a slide.

// Colours of the sides, those of the explorer's light theme.
var sideColour = [...]string{"#006D9C", "#B04E00"}

const (
	svgW      = 1200 // document width
	colW      = svgW / 2
	plotLeft  = 78 // plot area's left edge within a column
	plotRight = 24 // margin right of the plot area
	plotW     = colW - plotLeft - plotRight
	plotH     = 160 // plot area height
	rowH      = plotH + 72
	topH      = 96 // title, subtitle and column heads
)

// row is one figure of the SVG: its title and the metrics it draws (a
// second metric is drawn dashed).
type row struct {
	id, title string // title: the figure and its unit; %s is the unit
	metrics   []metric
	labels    []string // legend per metric, "" for a single one
}

var svgRows = []row{
	{"throughput", "throughput (%s)", []metric{mThroughput}, legends(mThroughput)},
	{"calls", "receive calls per 2 MiB of payload (receiving process)", []metric{mCalls}, legends(mCalls)},
	{"cpu", "CPU (%s busy, user+sys)", []metric{mCPUClient, mCPUServer}, legends(mCPUClient, mCPUServer)},
	{"fill", "send buffer full ≥ 90%% / empty < 10%% (%s of samples)", []metric{mFillFull, mFillEmpty}, legends(mFillFull, mFillEmpty)},
}

// legends are a chart's legend per metric, from their entries of the
// table of figures: none for a single line; a process's figure its
// process ("client"), any other its short label ("full").
func legends(ms ...metric) []string {
	if len(ms) == 1 {
		return []string{""}
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		e := model.FigureOf(metricFigure[m])
		out[i] = e.Short
		if e.Of == model.OfClient || e.Of == model.OfServer {
			out[i] = string(e.Of)
		}
	}
	return out
}

// rowsOf are the charts of a report: the fill's only when a sample has
// one (runs saved before it was sampled, or off Linux, have none).
func rowsOf(rep *model.Report) []row {
	for i := range rep.Samples {
		if rep.Samples[i].Fill().Known() {
			return svgRows
		}
	}
	return svgRows[:len(svgRows)-1]
}

// svgDoc accumulates the document.
type svgDoc struct{ strings.Builder }

func (d *svgDoc) f(format string, a ...any) { fmt.Fprintf(d, format, a...) }

// begin opens the document: an SVG of width by height on white, with its
// title.
func (d *svgDoc) begin(width, height int, title string) {
	d.f(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	d.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	d.f("<title>%s</title>\n", esc(title))
	d.f(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
}

// partialBanner says at the top right, ending at x, that the run or sweep
// (what) is partial, and why ("cause not recorded" when it was not).
func (d *svgDoc) partialBanner(x, y int, what, reason string) {
	if reason == "" {
		reason = "cause not recorded"
	}
	d.f(`<text class="partial" x="%d" y="%d" text-anchor="end" font-size="14" font-weight="bold" fill="#C62828">partial %s: %s</text>`+"\n",
		x, y, what, esc(reason))
}

// esc escapes text for XML content and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// px prints a coordinate with one decimal.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// SVG renders a run as a self-contained SVG document: 2 sides × 3 charts
// (throughput, calls per 2 MiB, CPU) over time, the changes marked and
// labelled, and a caption with the platform, buffers and placement.
func SVG(name string, rep model.Report) string {
	sides := sidesOf(&rep)
	end := span(&rep)
	caption := captionOf(&rep, sides)
	changeCols := changeColumns(caption.changes)
	captionRows := len(caption.head) + (len(caption.changes)+changeCols-1)/changeCols + len(caption.tail)
	svgRows := rowsOf(&rep)
	height := topH + len(svgRows)*rowH + 24 + 18*captionRows + 16
	var d svgDoc
	d.begin(svgW, height, "nbdscope run "+name)
	d.header(name, &rep, sides)
	for r, rw := range svgRows {
		segs := make([][][]segment, len(sides))
		var all [][]segment
		for k, sd := range sides {
			for _, m := range rw.metrics {
				s := sd.segments(m)
				segs[k] = append(segs[k], s)
				all = append(all, s)
			}
		}
		ax := makeAxis(rw.metrics[0], maxOf(all...), 4)
		for k, sd := range sides {
			x0, y0 := float64(k*colW+plotLeft), float64(topH+r*rowH+28)
			d.chart(rw, sd, k, segs[k], ax, end, x0, y0, r == 0, r == len(svgRows)-1)
		}
	}
	d.caption(caption, changeCols, topH+len(svgRows)*rowH+8)
	d.f("</svg>\n")
	return d.String()
}

// changeColumns is how many columns the numbered list of changes takes:
// two when it is long and every line fits half the width, else one.
func changeColumns(changes []string) int {
	if len(changes) <= 6 {
		return 1
	}
	for _, l := range changes {
		if textWidth(l, 12) > colW-48 {
			return 1
		}
	}
	return 2
}

// caption writes the caption from baseline y: the head lines, the changes
// in cols columns (down, then across), then the tail.
func (d *svgDoc) caption(c caption, cols int, y int) {
	d.f(`<g class="caption" font-size="12" fill="#333333">` + "\n")
	line := func(x, y int, l string) {
		if strings.HasPrefix(l, " ") { // continuation lines are indented (SVG collapses blanks)
			x, l = x+20, strings.TrimLeft(l, " ")
		}
		d.f(`<text x="%d" y="%d">%s</text>`+"\n", x, y, esc(l))
	}
	for _, l := range c.head {
		line(24, y, l)
		y += 18
	}
	perCol := (len(c.changes) + cols - 1) / cols
	for i, l := range c.changes {
		line(24+i/perCol*colW, y+18*(i%perCol), l)
	}
	y += 18 * perCol
	for _, l := range c.tail {
		line(24, y, l)
		y += 18
	}
	d.f("</g>\n")
}

// header writes the title, the run's time and preset, and a head over
// each side's column saying what the side did.
func (d *svgDoc) header(name string, rep *model.Report, sides []side) {
	if name == "" {
		name = "(unsaved)"
	}
	d.f(`<text class="title" x="24" y="30" font-size="20" font-weight="bold">nbdscope run %s</text>`+"\n", esc(name))
	var sub []string
	if !rep.Time.IsZero() {
		sub = append(sub, rep.Time.UTC().Format(time.DateTime+" MST"))
	}
	if rep.Preset != "" {
		sub = append(sub, "preset "+rep.Preset)
	}
	if rep.Config.Mode != "" {
		sub = append(sub, string(rep.Config.Mode)+" mode, "+rep.Config.Interval.D().String()+" samples")
	}
	if rep.Nbdscope != "" {
		sub = append(sub, "nbdscope "+rep.Nbdscope)
	}
	d.f(`<text class="subtitle" x="24" y="52" fill="#555555">%s</text>`+"\n", esc(strings.Join(sub, " · ")))
	if rep.Partial {
		d.partialBanner(svgW-24, 30, "run", rep.PartialReason)
	}
	for k, sd := range sides {
		sc := rep.Config.Sides[k]
		what := fmt.Sprintf("%s, %s, %d conn × %s, %d in flight", sc.Workload, transportOf(sc),
			sc.Connections, units.FormatSize(int64(sc.RequestSize)), sc.InFlight)
		if f, _ := shellword.Split(sc.Exec); len(f) > 0 { // a real client's shape is its own, not our load's settings
			what = fmt.Sprintf("%s, %s: a real client (%s) as the load", sc.Workload, transportOf(sc), f[0])
			if fl := clientFlow(rep, k); fl != "" && fl != model.FlowOf(sc.Workload) {
				// What it did, as its server saw it: the charts are a read's.
				what = fmt.Sprintf("%s (the workload set: %s), %s: a real client (%s) as the load", fl, sc.Workload, transportOf(sc), f[0])
			}
		}
		d.f(`<text class="side-head" x="%d" y="82" font-size="15" font-weight="bold" fill="%s">side %s <tspan font-weight="normal" font-size="12" fill="#333333">%s</tspan></text>`+"\n",
			k*colW+24, sideColour[k%2], esc(sd.name), esc(what))
	}
}

// clientFlow is which way side k's real client moved its data over the
// run (read, write), "" when not one way or not known.
func clientFlow(rep *model.Report, k int) model.Flow {
	if k >= len(rep.Sides) {
		return ""
	}
	if fl := rep.Sides[k].Summary.Flow; fl == model.FlowRead || fl == model.FlowWrite {
		return fl
	}
	return ""
}

func transportOf(sc model.SideConfig) string {
	if sc.Target != "" {
		return sc.Target
	}
	return string(sc.Transport)
}

// chart writes one side's chart of one row, with its plot area at
// (x0, y0). named: label the change markers with their change.
func (d *svgDoc) chart(rw row, sd side, k int, segs [][]segment, ax axis, end, x0, y0 float64, named, last bool) {
	d.f(`<g class="chart" data-side="%s" data-figure="%s">`+"\n", esc(sd.name), rw.id)
	d.f(`<text class="chart-title" x="%s" y="%s" font-weight="bold">%s</text>`+"\n", px(x0-54), px(y0-12), esc(chartTitle(rw, ax)))
	if len(rw.metrics) > 1 {
		d.legend(rw, k, x0+plotW, y0-12)
	}
	xOf := func(t float64) float64 { return x0 + t/end*plotW }
	yOf := func(v float64) float64 { return y0 + plotH - v/ax.div/ax.top*plotH }
	d.axes(ax, end, x0, y0, xOf, yOf, last)
	d.markers(sd, end, x0, y0, xOf, named)
	for i, ss := range segs {
		dash := ""
		if i > 0 {
			dash = ` stroke-dasharray="5 3"`
		}
		n := 0
		for _, sg := range ss {
			n += len(sg)
		}
		d.f(`<g class="series" data-metric="%s" data-points="%d" fill="none" stroke="%s" stroke-width="1.8"%s>`+"\n",
			metricID(rw.metrics[i]), n, sideColour[k%2], dash)
		for _, sg := range ss {
			d.segment(sg, xOf, yOf, sideColour[k%2])
		}
		d.f("</g>\n")
	}
	if math.IsNaN(maxOf(segs...)) { // nothing measured
		d.f(`<text class="no-data" x="%s" y="%s" text-anchor="middle" fill="#888888">not measured</text>`+"\n", px(x0+plotW/2), px(y0+plotH/2))
	}
	d.f("</g>\n")
}

// chartTitle is a row's title with its axis unit, when the unit is not
// already in the words.
func chartTitle(rw row, ax axis) string {
	if strings.Contains(rw.title, "%s") {
		return fmt.Sprintf(rw.title, ax.unit)
	}
	return rw.title
}

func metricID(m metric) string {
	return [...]string{"throughput", "calls", "cpu-client", "cpu-server", "fill-full", "fill-empty"}[m]
}

// segment draws a run of samples as a line; a lone sample as a dot.
func (d *svgDoc) segment(sg segment, xOf, yOf func(float64) float64, colour string) {
	if len(sg) == 1 {
		d.f(`<circle cx="%s" cy="%s" r="2.5" fill="%s" stroke="none"/>`+"\n", px(xOf(sg[0].t)), px(yOf(sg[0].v)), colour)
		return
	}
	var b strings.Builder
	for i, p := range thin(sg, xOf) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(px(xOf(p.t)) + "," + px(yOf(p.v)))
	}
	d.f(`<polyline points="%s"/>`+"\n", b.String())
}

// thin keeps a long segment's shape with at most four points per pixel
// column: the first, the lowest, the highest and the last, in time order.
// An hour of 250 ms samples then draws as it looks, in a document small
// enough to paste.
func thin(sg segment, xOf func(float64) float64) segment {
	if len(sg) <= 2*plotW {
		return sg
	}
	var out segment
	for i := 0; i < len(sg); {
		c := math.Floor(xOf(sg[i].t))
		j, lo, hi := i, i, i
		for ; j < len(sg) && math.Floor(xOf(sg[j].t)) == c; j++ {
			if sg[j].v < sg[lo].v {
				lo = j
			}
			if sg[j].v > sg[hi].v {
				hi = j
			}
		}
		keep := []int{i, lo, hi, j - 1}
		sort.Ints(keep)
		for k, idx := range keep {
			if k == 0 || idx != keep[k-1] {
				out = append(out, sg[idx])
			}
		}
		i = j
	}
	return out
}

// legend names the lines of a two-metric chart, right-aligned at (x, y).
func (d *svgDoc) legend(rw row, k int, x, y float64) {
	d.f(`<g class="legend" font-size="11">` + "\n")
	for i := len(rw.labels) - 1; i >= 0; i-- {
		x -= 58
		dash := ""
		if i > 0 {
			dash = ` stroke-dasharray="5 3"`
		}
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.8"%s/>`, px(x), px(y-4), px(x+18), px(y-4), sideColour[k%2], dash)
		d.f(`<text x="%s" y="%s">%s</text>`+"\n", px(x+22), px(y), esc(rw.labels[i]))
	}
	d.f("</g>\n")
}

// axes draws the frame, the value ticks with grid lines and the time
// ticks with their labels; the time axis is named under the last row.
func (d *svgDoc) axes(ax axis, end, x0, y0 float64, xOf, yOf func(float64) float64, last bool) {
	d.f(`<g class="axis-y" font-size="11" fill="#333333" data-unit="%s">`+"\n", esc(ax.unit))
	for _, v := range ax.ticks() {
		y := yOf(v * ax.div)
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e4e4e4"/>`, px(x0), px(y), px(x0+plotW), px(y))
		d.f(`<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`+"\n", px(x0-6), px(y+4), ax.label(v))
	}
	d.f("</g>\n")
	d.f(`<g class="axis-x" font-size="11" fill="#333333" data-unit="s">` + "\n")
	step := timeStep(end, 10)
	for t := 0.0; t <= end+1e-9; t += step {
		x := xOf(t)
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#999999"/>`, px(x), px(y0+plotH), px(x), px(y0+plotH+4))
		d.f(`<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", px(x), px(y0+plotH+16), secs(t))
	}
	if last {
		d.f(`<text class="axis-title" x="%s" y="%s" text-anchor="end" fill="#666666">time since the start (s)</text>`+"\n", px(x0+plotW), px(y0+plotH+30))
	}
	d.f("</g>\n")
	d.f(`<path class="frame" d="M%s %sV%sH%s" fill="none" stroke="#555555"/>`+"\n", px(x0), px(y0), px(y0+plotH), px(x0+plotW))
}

// markers draws a side's changes: a dashed line each, numbered by its
// place in the run's events, the numbers laid out apart (layoutMarkers);
// named also names each change where its name fits.
func (d *svgDoc) markers(sd side, end, x0, y0 float64, xOf func(float64) float64, named bool) {
	var marks []mark
	for _, e := range sd.events {
		x := xOf(math.Min(e.T, end))
		d.f(`<g class="marker" data-t="%s" data-setting="%s" data-change="%d">`, strconv.FormatFloat(e.T, 'f', 3, 64), esc(e.Setting), e.n)
		d.f(`<title>%s</title>`, esc(fmt.Sprintf("%d: %.2fs %s", e.n, e.T, eventText(e.Event))))
		d.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#666666" stroke-dasharray="3 3"/>`, px(x), px(y0), px(x), px(y0+plotH))
		d.f("</g>\n")
		marks = append(marks, mark{x: x, n: e.n, name: eventText(e.Event)})
	}
	if len(marks) == 0 {
		return
	}
	d.f(`<g class="marker-labels" font-size="%s" fill="#444444">`+"\n", px(markerFont))
	for _, l := range layoutMarkers(marks, plotArea{x0, y0, plotW}, named) {
		nums := make([]string, len(l.nums))
		for i, n := range l.nums {
			nums[i] = strconv.Itoa(n)
		}
		d.f(`<text class="marker-label" data-changes="%s" x="%s" y="%s" text-anchor="%s" stroke="#ffffff" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
			strings.Join(nums, ","), px(l.x), px(l.y), l.anchor, esc(l.text))
	}
	d.f("</g>\n")
}
