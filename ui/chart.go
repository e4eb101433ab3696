package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/guptarohit/asciigraph"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

// The charts: asciigraph plots over a scrolling time window, stacked so
// that one time axis serves them all and a change's marker lines up in
// every chart. Side A is drawn with light lines, side B with heavy ones
// (readable without colour); a second series of a side (server CPU, p99)
// is dashed. A baseline (a saved run, see baseline.go) is drawn dotted and
// faint behind the live series.

type unitKind int

const (
	unitRate unitKind = iota
	unitCalls
	unitCores
	unitMs
	unitWakeups
	unitPct // a share of samples, 0–100 (fillchart.go)
)

type seriesDef struct {
	side, metric int
	dashed       bool
	label        string // within the side: "cli", "p99"; "" for the only one
}

type chartDef struct {
	name   string
	unit   unitKind
	series []seriesDef
}

var (
	chartThroughput = chartDef{"throughput", unitRate, []seriesDef{{0, mTput, false, ""}, {1, mTput, false, ""}}}
	chartCalls      = chartDef{"syscalls", unitCalls, []seriesDef{{0, mCalls, false, ""}, {1, mCalls, false, ""}}}
	chartCPU        = chartDef{"CPU", unitCores, pairedSeries(mCPUClient, mCPUServer)}
	chartLatency    = chartDef{"latency", unitMs, pairedSeries(mP50, mP99)}
	chartWakeups    = chartDef{"wake-ups", unitWakeups, pairedSeries(mWakeClient, mWakeServer)}
)

// pairedSeries are a chart's series of two metrics per side, the second
// dashed, each labelled by its entry of the table of figures.
func pairedSeries(solid, dashed int) []seriesDef {
	var out []seriesDef
	for side := 0; side < 2; side++ {
		out = append(out, seriesDef{side, solid, false, seriesLabel(solid)}, seriesDef{side, dashed, true, seriesLabel(dashed)})
	}
	return out
}

// seriesLabel is a series' word in a legend, within its side: a process's
// figure its process ("cli", "srv"), any other its entry's short label
// ("p99", "full").
func seriesLabel(metric int) string {
	e := model.FigureOf(metricFigure[metric])
	switch e.Of {
	case model.OfClient:
		return "cli"
	case model.OfServer:
		return "srv"
	}
	return e.Short
}

// callsChart is the syscalls chart: each side's receiver's receive calls,
// and for a side that writes, its sender's (the client's) send calls
// dashed: for writes the send buffer shows in the sender's calls.
func (c *charts) callsChart() chartDef {
	d := chartDef{name: chartCalls.name, unit: chartCalls.unit}
	for side := 0; side < 2; side++ {
		if p := c.last[side]; p != nil && p.write {
			d.series = append(d.series, seriesDef{side, mCalls, false, "rcv"}, seriesDef{side, mSend, true, "snd"})
			continue
		}
		d.series = append(d.series, seriesDef{side, mCalls, false, ""})
	}
	return d
}

// Line styles: light for A, heavy for B; dashed for a side's second series.
var (
	charsA       = asciigraph.DefaultCharSet
	charsADashed = asciigraph.CharSet{Horizontal: "┄", VerticalLine: "┆", ArcDownRight: "╭", ArcDownLeft: "╮", ArcUpRight: "╰", ArcUpLeft: "╯", EndCap: "╴", StartCap: "╶"}
	charsB       = asciigraph.CharSet{Horizontal: "━", VerticalLine: "┃", ArcDownRight: "┏", ArcDownLeft: "┓", ArcUpRight: "┗", ArcUpLeft: "┛", EndCap: "╸", StartCap: "╺"}
	charsBDashed = asciigraph.CharSet{Horizontal: "┅", VerticalLine: "┇", ArcDownRight: "┏", ArcDownLeft: "┓", ArcUpRight: "┗", ArcUpLeft: "┛", EndCap: "╸", StartCap: "╺"}
)

const (
	lightRunes = "─│╭╮╰╯╴╶┄┆"
	heavyRunes = "━┃┏┓┗┛╸╺┅┇"
	markRune   = '┊'
)

func charSet(side int, dashed bool) asciigraph.CharSet {
	switch {
	case side == 0 && !dashed:
		return charsA
	case side == 0:
		return charsADashed
	case !dashed:
		return charsB
	}
	return charsBDashed
}

func glyph(side int, dashed bool) string {
	cs := charSet(side, dashed)
	return cs.Horizontal + cs.Horizontal
}

// minChartLines is a chart's least height: a title and four plot rows.
const minChartLines = 5

// charts is the chart component.
type charts struct {
	com           *common
	width, height int
	window        float64 // seconds shown
	names         [2]string
	hist          [2]history
	last          [2]*point // latest active point, for the legends
	// turn is a waiting side's last turn, over the whole of it (what its
	// panel shows then, panel.shown), nil while the side runs: its
	// legends show it, marked (turnMarks).
	turn [2]*point
	// others: side i's figures are all another client's or server's
	// than it runs now (panel.othersOnly): its legends show none, its
	// lines stay as they were measured.
	others [2]bool
	// fill is each side's send-buffer fill as its panel shows it (the
	// panel's verdict figures: a running side's last 2 s, a waiting
	// side's last turn): the fill chart's legend shows the same.
	fill   [2]model.Fill
	events []model.Event // the changes: a marker each on the time axis
	// runs are each side's finished real-client runs (model.ExecRunEvent)
	// in the window and a little before it: not changes the user made,
	// so no marker (a client restarted each 0.25 s filled the axis with
	// them, on two rows); the change strip counts them (runsNote).
	runs    [2][]model.Event
	now     float64   // seconds since the start
	latency bool      // show the latency chart
	page    int       // first chart shown when not all fit
	base    *baseline // a saved run drawn behind (nil: none)
}

func newCharts(com *common, window float64, names [2]string) charts {
	return charts{com: com, window: window, names: names}
}

// SetSize sets the area the charts may use.
func (c *charts) SetSize(w, h int) { c.width, c.height = w, h }

// add records an active sample of side i.
func (c *charts) add(i int, s model.Sample) {
	p := pointOf(s)
	c.hist[i].add(p, s.T-c.window-5)
	c.last[i] = &p
	if s.T > c.now {
		c.now = s.T
	}
}

// setTurn sets side i's last turn's figures while it waits, or nil
// while it runs (see turn); others, that the side's figures are all
// another runner's (see others).
func (c *charts) setTurn(i int, f *model.Figures, others bool) {
	c.others[i] = others
	if f == nil {
		c.turn[i] = nil
		return
	}
	p := pointOf(model.Sample{Figures: *f})
	c.turn[i] = &p
}

// setFill sets the fill side i's panel shows, for the fill chart's
// legend.
func (c *charts) setFill(i int, fl model.Fill) { c.fill[i] = fl }

// legendFigure is the figure a legend shows for metric of side: the
// panel's fill for the fill chart's shares, else p's.
func (c *charts) legendFigure(side int, metric int, p *point) float64 {
	switch {
	case metric == mFullPct && c.fill[side].Known():
		return float64(c.fill[side].FullPct)
	case metric == mEmptyPct && c.fill[side].Known():
		return float64(c.fill[side].EmptyPct)
	case p == nil:
		return math.NaN()
	}
	return p.v[metric]
}

func (c *charts) addEvent(ev model.Event) {
	if ev.Setting == model.ExecRunEvent {
		c.addRun(ev)
		return
	}
	c.events = append(c.events, ev)
	// Keep what the window can show, and a few for the event strip.
	keep := 0
	for keep < len(c.events)-8 && c.events[keep].T < c.now-c.window-5 {
		keep++
	}
	c.events = append(c.events[:0], c.events[keep:]...)
	if len(c.events) > 200 {
		c.events = append(c.events[:0], c.events[len(c.events)-200:]...)
	}
}

// maxRuns bounds the runs kept a side: a client that exits at once is
// restarted many times a second.
const maxRuns = 1000

// addRun keeps a finished client run of its side, those before the
// window dropped.
func (c *charts) addRun(ev model.Event) {
	i := ev.Side.Index()
	if i < 0 {
		return
	}
	rs := append(c.runs[i], ev)
	keep := 0
	for keep < len(rs) && rs[keep].T < c.now-c.window-5 {
		keep++
	}
	keep = max(keep, len(rs)-maxRuns)
	c.runs[i] = append(rs[:0], rs[keep:]...)
}

// clear forgets every point and marker (the `x` key).
func (c *charts) clear() {
	c.hist = [2]history{}
	c.last, c.turn, c.fill = [2]*point{}, [2]*point{}, [2]model.Fill{}
	c.events, c.runs = nil, [2][]model.Event{}
}

func (c *charts) defs() []chartDef {
	d := []chartDef{chartThroughput, c.callsChart(), chartCPU}
	if c.latency {
		d = append(d, chartLatency)
	}
	return append(d, chartWakeups, chartFill)
}

// span returns the window [t0, t0+window] shown: it starts at 0 and
// scrolls once the run is longer than the window.
func (c *charts) span() (t0 float64) {
	return max(c.now, c.window) - c.window
}

// layout decides how many charts fit (from the page on), their heights
// and whether the change strip fits.
func (c *charts) layout() (shown []chartDef, heights []int, events bool, paging bool) {
	defs := c.defs()
	avail := c.height - 2 // time axis and its labels
	fit := avail / minChartLines
	if fit <= 0 {
		return nil, nil, false, false
	}
	n := min(fit, len(defs))
	paging = n < len(defs)
	for k := 0; k < n; k++ {
		shown = append(shown, defs[(c.page+k)%len(defs)])
	}
	rest := avail - n*minChartLines
	if rest >= 1 {
		events = true
		avail--
	}
	per, extra := avail/n, avail%n
	for k := range shown {
		h := per
		if k < extra {
			h++
		}
		heights = append(heights, h)
	}
	return shown, heights, events, paging
}

// paging reports whether not every chart fits (the `v` key pages).
func (c *charts) paging() bool {
	_, _, _, p := c.layout()
	return p
}

func (c *charts) nextPage() {
	c.page = (c.page + 1) % len(c.defs())
}

// scale is a chart's vertical axis.
type scale struct {
	div    float64 // divide values by this (rate units)
	unit   string
	maxY   float64
	step   float64
	dec    int
	labelW int
}

func rateUnit(maxBps float64) (float64, string) {
	if u := shownRate.Load(); u != nil {
		return u.BytesPer, u.Name
	}
	return units.RateUnit(maxBps)
}

// niceStep rounds x up to 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 × 10^k.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	f := x / p
	for _, n := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if f <= n*(1+1e-9) {
			return max(n*p, 0.001)
		}
	}
	return max(10*p, 0.001)
}

func decimals(step float64) int {
	for d := 0; d < 3; d++ {
		v := step * math.Pow(10, float64(d))
		if math.Abs(v-math.Round(v)) < 1e-6 {
			return d
		}
	}
	return 3
}

func makeScale(u unitKind, mx float64, rows int) scale {
	sc := scale{div: 1}
	switch u {
	case unitRate:
		sc.div, sc.unit = rateUnit(mx)
	case unitCalls:
		sc.unit = "calls/2MiB"
	case unitCores:
		sc.unit = "cores"
	case unitMs:
		sc.unit = "ms"
	case unitWakeups:
		sc.unit = "switches/2MiB"
	case unitPct:
		sc.unit = "%"
		mx = 100 // a share: the same scale whatever the figures
	}
	v := mx / sc.div
	if math.IsNaN(v) || v <= 0 {
		v = 1
	}
	rows = max(rows, 1)
	if u == unitPct {
		return pctScale(sc, rows)
	}
	sc.step = niceStep(v / float64(rows))
	sc.maxY = sc.step * float64(rows)
	sc.dec = decimals(sc.step)
	sc.labelW = len(fmt.Sprintf("%.*f", sc.dec, sc.maxY))
	return sc
}

func (c *charts) maxOf(d chartDef, t0, t1 float64) float64 {
	mx := math.NaN()
	for _, s := range d.series {
		if v := c.hist[s.side].maxIn(s.metric, t0, t1); !math.IsNaN(v) && (math.IsNaN(mx) || v > mx) {
			mx = v
		}
	}
	if c.base != nil {
		for _, s := range d.series {
			if s.dashed {
				continue
			}
			if v := c.base.in(s.side, t0, t1).maxIn(s.metric, t0, t1); !math.IsNaN(v) && (math.IsNaN(mx) || v > mx) {
				mx = v
			}
		}
	}
	return mx
}

// chartTitle names a chart; short is the form for a narrow terminal,
// where the legend's figures matter more.
func chartTitle(d chartDef, unit string, short bool) string {
	switch {
	case d.unit == unitCalls && short:
		return "recv calls per 2 MiB"
	case d.unit == unitCalls:
		return "syscalls per 2 MiB (" + unit + ", receiving side)"
	case d.unit == unitCores && short:
		return "CPU (" + unit + ")"
	case d.unit == unitCores:
		return "CPU (" + unit + " busy, user+sys)"
	case d.unit == unitWakeups && short:
		return "wake-ups per 2 MiB"
	case d.unit == unitWakeups:
		return "wake-ups: voluntary context switches per 2 MiB"
	case d.unit == unitPct:
		return fillChartTitle(short)
	}
	return d.name + " (" + unit + ")"
}

// mark is a change's marker: its column and side (-1: the pair).
type mark struct {
	col  int
	side int
}

// chartPlan is what the charts draw at their size, decided before
// drawing: which charts, their heights and scales, and whether the change
// strip fits. With no charts, note says why (or nothing fits at all).
type chartPlan struct {
	note    string
	shown   []chartDef
	heights []int
	scales  []scale
	labelW  int // the y labels' width
	plotW   int // the plot's width, in cells (one a time bucket)
	t0      float64
	strip   bool // the change strip is drawn below the time axis
	paging  bool // not every chart fits: the first title says so
}

// plan lays the charts out in the area set by SetSize.
func (c *charts) plan() chartPlan {
	if c.width < 20 || c.height < 1 {
		return chartPlan{}
	}
	shown, heights, withEvents, paging := c.layout()
	if len(shown) == 0 {
		return chartPlan{note: "enlarge the terminal to see the charts"}
	}
	p := chartPlan{shown: shown, heights: heights, t0: c.span(), labelW: 1, paging: paging}
	p.scales = make([]scale, len(shown))
	for k, d := range shown {
		p.scales[k] = makeScale(d.unit, c.maxOf(d, p.t0, p.t0+c.window), heights[k]-2)
		p.labelW = max(p.labelW, p.scales[k].labelW)
	}
	p.plotW = c.width - (p.labelW + 2) - 1
	if p.plotW < 10 {
		return chartPlan{note: "widen the terminal to see the charts"}
	}
	p.strip = withEvents
	return p
}

// View renders the charts into exactly the area set by SetSize (or less).
func (c *charts) View() string { return c.draw(c.plan()) }

// draw renders the charts as planned.
func (c *charts) draw(p chartPlan) string {
	st := c.com.styles
	if p.note != "" {
		return st.Dim.Render(clip(p.note, c.width))
	}
	if len(p.shown) == 0 {
		return ""
	}
	marks, inWindow := c.marks(p)
	var out []string
	for k, d := range p.shown {
		title := c.titleLine(d, p.scales[k], k == 0 && p.paging, len(c.defs()), len(p.shown))
		out = append(out, title)
		out = append(out, c.plot(d, p.scales[k], p.heights[k]-1, p.labelW, p.plotW, p.t0, marks)...)
	}
	out = append(out, c.axis(p.labelW, p.plotW, p.t0, marks)...)
	if p.strip {
		out = append(out, c.eventStrip(inWindow, c.runsNote(p.t0)))
	}
	return strings.Join(out, "\n")
}

// marks places the changes in the window on the plot's columns.
func (c *charts) marks(p chartPlan) (marks []mark, inWindow []model.Event) {
	t1 := p.t0 + c.window
	for _, ev := range c.events {
		if ev.T < p.t0 || ev.T > t1 {
			continue
		}
		col := min(max(int(math.Floor((ev.T-p.t0)/c.window*float64(p.plotW))), 0), p.plotW-1)
		inWindow = append(inWindow, ev)
		marks = append(marks, mark{col, ev.Side.Index()})
	}
	return marks, inWindow
}

// turnMarks mark a waiting side's legend figures as its last turn's,
// the longer where it fits.
var turnMarks = []string{" last turn", " turn"}

// titleLine is "throughput (GiB/s)  A ── 1.52  B ━━ 4.10", with the
// paging hint on the right. When it does not fit, the title and then the
// hint get shorter, so that the legend's figures stay readable.
func (c *charts) titleLine(d chartDef, sc scale, pageHint bool, total, shown int) string {
	st := c.com.styles
	legend := c.legend(d, sc, turnMarks[0])
	// The baseline's figures (at the live run's elapsed time) follow,
	// with its name when there is room.
	legends := []string{legend}
	if c.base != nil {
		var bl strings.Builder
		for _, s := range d.series {
			if s.dashed {
				continue
			}
			bl.WriteString("  ")
			bl.WriteString(st.SideFaint[s.side].Render(c.names[s.side] + "'"))
			bl.WriteString(" " + st.SideFaint[s.side].Render(baseGlyph(s.side)))
			if p := c.base.at(s.side, c.now); p != nil && !math.IsNaN(p.v[s.metric]) {
				bl.WriteString(" " + legendValue(d.unit, p.v[s.metric]/sc.div))
			} else {
				bl.WriteString(" " + st.NA.Render(na))
			}
		}
		named := bl.String() + st.Dim.Render(" (baseline "+c.base.name+")")
		legends = []string{legend + named, legend + bl.String(), legend}
	}
	if short := c.legend(d, sc, turnMarks[1]); short != legend {
		legends = append(legends, short)
	}
	full, short := st.Title.Render(chartTitle(d, sc.unit, false)), st.Title.Render(chartTitle(d, sc.unit, true))
	hints := []string{""}
	if pageHint {
		hints = []string{
			st.Dim.Render(fmt.Sprintf("showing %d of %d · v next", shown, total)),
			st.Dim.Render(fmt.Sprintf("%d of %d · v", shown, total)),
		}
	}
	for _, lg := range legends {
		for _, hint := range hints {
			for _, title := range []string{full, short} {
				left := title + lg
				if hint == "" && cellWidth(left) <= c.width {
					return left
				}
				if hint != "" && cellWidth(left)+2+cellWidth(hint) <= c.width {
					return spread(left, hint, c.width)
				}
			}
		}
	}
	return c.fitLegend(short, c.legendItems(d, sc, turnMarks[len(turnMarks)-1]))
}

// fitLegend is title and as many of the legend's items as fit, whole,
// with "…" for those left out: cut anywhere, "srv 140" read "srv 1…".
func (c *charts) fitLegend(title string, items []string) string {
	for n := len(items); n > 0; n-- {
		s := title + strings.Join(items[:n], "")
		if n < len(items) {
			s += " …"
		}
		if cellWidth(s) <= c.width {
			return s
		}
	}
	return clip(title, c.width)
}

// legend is "  A ── 1.52  B ━━ 4.10": each side's series and their
// figures. A running side's figures are its latest sample's, the end of
// its line. A side that waits its turn (or is paused) shows its last
// turn's, over the whole turn, as its panel does, marked with mark: its
// latest active sample is the turn's end, often its drain alone (the
// explorer showed 3.89 GiB/s against the panel's 5.53), so it would be
// neither the turn's figure nor, the line having stopped, a live one.
func (c *charts) legend(d chartDef, sc scale, mark string) string {
	return strings.Join(c.legendItems(d, sc, mark), "")
}

// legendItems are the legend's series, each with its figure; a side's
// first carries the side's name (and mark) before it.
func (c *charts) legendItems(d chartDef, sc scale, mark string) []string {
	st := c.com.styles
	var items []string
	for side := 0; side < 2; side++ {
		var b strings.Builder
		b.WriteString("  ")
		b.WriteString(st.Side[side].Render(c.names[side]))
		p := c.last[side]
		if c.others[side] {
			p = nil
		}
		if c.turn[side] != nil {
			p = c.turn[side]
			b.WriteString(st.Dim.Render(mark))
		}
		for _, s := range d.series {
			if s.side != side {
				continue
			}
			b.WriteString(" ")
			b.WriteString(st.Side[side].Render(glyph(s.side, s.dashed)))
			if s.label != "" {
				b.WriteString(" " + st.Dim.Render(s.label))
			}
			if v := c.legendFigure(side, s.metric, p); !math.IsNaN(v) {
				b.WriteString(" " + legendValue(d.unit, v/sc.div))
			} else {
				b.WriteString(" " + st.NA.Render(na))
			}
			items = append(items, b.String())
			b.Reset()
		}
	}
	return items
}

// plot renders one chart's rows: y labels, axis and series, with the
// baseline behind them and change markers in the empty cells of their
// column.
func (c *charts) plot(d chartDef, sc scale, lines, labelW, plotW int, t0 float64, marks []mark) []string {
	lines = max(lines, 2)
	prefix := labelW + 2
	data, sets := c.liveSeries(d, sc, plotW, t0)
	cv := newCanvas(graphRows(data, sets, sc, lines, labelW), lines, prefix, prefix+plotW)
	if bdata, bsets := c.baseSeries(d, sc, plotW, t0); bdata != nil {
		cv.underlay(graphRows(bdata, bsets, sc, lines, labelW))
	}
	cv.mark(marks)
	return cv.render(c.com.styles)
}

// liveSeries is a chart's live series, one value a column, and their
// line styles.
func (c *charts) liveSeries(d chartDef, sc scale, plotW int, t0 float64) ([][]float64, []asciigraph.CharSet) {
	data := make([][]float64, len(d.series))
	sets := make([]asciigraph.CharSet, len(d.series))
	for i, s := range d.series {
		data[i] = c.hist[s.side].bucket(s.metric, t0, c.window, plotW, sc.div)
		sets[i] = charSet(s.side, s.dashed)
	}
	return data, sets
}

// baseSeries is the baseline's series of a chart (a side's first series
// only), or nil when there is no baseline or none of it is in the window.
func (c *charts) baseSeries(d chartDef, sc scale, plotW int, t0 float64) ([][]float64, []asciigraph.CharSet) {
	if c.base == nil {
		return nil, nil
	}
	var data [][]float64
	var sets []asciigraph.CharSet
	seen := false
	for _, s := range d.series {
		if s.dashed {
			continue
		}
		v := c.base.in(s.side, t0, t0+c.window).bucket(s.metric, t0, c.window, plotW, sc.div)
		for _, x := range v {
			seen = seen || !math.IsNaN(x)
		}
		data = append(data, v)
		sets = append(sets, charsBaseA)
		if s.side == 1 {
			sets[len(sets)-1] = charsBaseB
		}
	}
	if !seen {
		return nil, nil
	}
	return data, sets
}

// graphRows plots series with asciigraph on the chart's grid: lines rows
// from 0 to the scale's top, labels labelW wide.
func graphRows(data [][]float64, sets []asciigraph.CharSet, sc scale, lines, labelW int) []string {
	label := func(v float64) string {
		if math.Abs(v) < sc.step/1000 {
			v = 0 // no "-0.0"
		}
		return fmt.Sprintf("%*.*f", labelW, sc.dec, v)
	}
	g := asciigraph.PlotMany(data,
		asciigraph.Height(lines-1),
		asciigraph.LowerBound(0),
		asciigraph.UpperBound(sc.maxY),
		asciigraph.Offset(2),
		asciigraph.YAxisValueFormatter(label),
		asciigraph.SeriesChars(sets...),
	)
	return strings.Split(g, "\n")
}

// baseSide tells a baseline glyph's side: B's are heavy.
func baseSide(r rune) int {
	if strings.ContainsRune(charsBaseB.Horizontal+charsBaseB.VerticalLine+charsBaseB.EndCap, r) {
		return 1
	}
	return 0
}

// tickStep picks the time between axis labels: labels at least 8 cells apart.
func tickStep(window float64, plotW int) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600} {
		if window/s*8 <= float64(plotW) {
			return s
		}
	}
	return 7200
}

// axis renders the time axis (ticks and markers with the side's letter)
// and its labels. Markers never overlap: one that would touch another on
// the axis (the same or the next column: "BB" read as one word) is
// stacked on the labels row below it, as the SVG stacks its labels, and
// the tick labels give way; one that touches on both rows joins the
// marker above it, which then reads * when the sides differ.
func (c *charts) axis(labelW, plotW int, t0 float64, marks []mark) []string {
	st := c.com.styles
	prefix := labelW + 2
	step := tickStep(c.window, plotW)
	line := []rune(strings.Repeat("─", plotW))
	var ticks []axisTick
	for t := math.Ceil(t0/step) * step; t <= t0+c.window+1e-9; t += step {
		col := min(int(math.Floor((t-t0)/c.window*float64(plotW))), plotW-1)
		ticks = append(ticks, axisTick{col, clock(t)})
		line[col] = '┬'
	}
	rows := stackMarks(marks, plotW)
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", prefix-1))
	b.WriteString(st.Axis.Render("└"))
	b.WriteString(c.markedRow(line, rows[0], st.Axis))
	lab := []rune(strings.Repeat(" ", prefix+plotW))
	last := -1
	for _, tk := range ticks {
		r := []rune(tk.label)
		start := prefix + tk.col - len(r)/2
		if start <= last || start+len(r) > len(lab) || rows[1].near(start-prefix-1, start-prefix+len(r)) {
			continue
		}
		copy(lab[start:], r)
		last = start + len(r)
	}
	labels := strings.TrimRight(string(lab), " ")
	if len(rows[1]) == 0 {
		return []string{b.String(), st.Dim.Render(labels)}
	}
	lr := []rune(string(lab))
	return []string{b.String(), st.Dim.Render(string(lr[:prefix])) + c.markedRow(lr[prefix:], rows[1], st.Dim)}
}

type axisTick struct {
	col   int
	label string
}

// markRow is one row's markers by column: the side, or -1 for the pair
// (or for sides that met in one marker).
type markRow map[int]int

// near reports whether a marker stands in [from, to], columns of the plot.
func (r markRow) near(from, to int) bool {
	for col := range r {
		if col >= from && col <= to {
			return true
		}
	}
	return false
}

// stackMarks puts each marker on the axis row, or on the labels row
// below when a marker stands at or beside its column there, or joins it
// to the axis marker it touches when both rows are taken.
func stackMarks(marks []mark, plotW int) [2]markRow {
	rows := [2]markRow{{}, {}}
	for _, m := range marks {
		col := min(max(m.col, 0), plotW-1)
		placed := false
		for _, r := range rows {
			if !r.near(col-1, col+1) {
				r[col], placed = m.side, true
				break
			}
		}
		if placed {
			continue
		}
		for c := col - 1; c <= col+1; c++ {
			if s, ok := rows[0][c]; ok && s != m.side {
				rows[0][c] = -1
			}
		}
	}
	return rows
}

// markedRow draws a row of runes with its markers over it, each in its
// side's colour (bold), the rest in base.
func (c *charts) markedRow(line []rune, marks markRow, base Style) string {
	st := c.com.styles
	var b strings.Builder
	var run []rune
	flush := func() {
		if len(run) > 0 {
			b.WriteString(base.Render(string(run)))
			run = run[:0]
		}
	}
	for x, r := range line {
		s, ok := marks[x]
		if !ok {
			run = append(run, r)
			continue
		}
		flush()
		letter := '*'
		if s >= 0 {
			letter = []rune(c.names[s] + "?")[0]
		}
		b.WriteString(st.sideStyle(s).Bold(true).Render(string(letter)))
	}
	flush()
	return b.String()
}

// eventStrip lists the newest changes in the window that fit on a line,
// with the real clients' runs in it counted on the right (runs).
func (c *charts) eventStrip(evs []model.Event, runs string) string {
	st := c.com.styles
	width := c.width
	if runs != "" {
		width -= cellWidth(runs) + 2
	}
	left := st.Dim.Render(clip("changes: none in this window — try +/- (send buffer) or g (the macOS/Linux gap)", width))
	if len(evs) == 0 && runs != "" {
		left = st.Dim.Render(clip("changes: none in this window", width))
	}
	if len(evs) > 0 {
		left = c.changeItems(evs, width)
	}
	if runs == "" {
		return left
	}
	return spread(left, runs, c.width)
}

// changeItems is "changes:" and the newest changes that fit in width.
func (c *charts) changeItems(evs []model.Event, width int) string {
	st := c.com.styles
	head := st.Dim.Render("changes:")
	w := cellWidth(head)
	var items []string
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		item := st.sideStyle(ev.Side.Index()).Render("▲"+clock(ev.T)) + " " + phrase.EventShort(ev)
		iw := cellWidth(item) + 2
		if w+iw > width && len(items) > 0 {
			break
		}
		items = append([]string{item}, items...)
		w += iw
	}
	return clip(head+"  "+strings.Join(items, "  "), width)
}

// runsNote counts each side's real-client runs that finished in the
// window from t0, with the latest one's time: "A 41 client runs, last
// 0.243s"; "" when none did.
func (c *charts) runsNote(t0 float64) string {
	st := c.com.styles
	var parts []string
	for i, rs := range c.runs {
		n := 0
		for _, r := range rs {
			if r.T >= t0 {
				n++
			}
		}
		if n == 0 {
			continue
		}
		parts = append(parts, st.Side[i].Render(c.names[i])+st.Dim.Render(" "+phrase.CountOf(n, "client run")+", last "+rs[len(rs)-1].To))
	}
	return strings.Join(parts, st.Dim.Render(" · "))
}
