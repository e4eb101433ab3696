package plot

import (
	"encoding/xml"
	"math"
	"strconv"
	"strings"
	"testing"

	"nbdscope/model"
)

// node is a parsed XML element.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []node     `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// all returns the elements under n (n included) named tag with class
// cls ("" for any).
func (n node) all(tag, cls string) []node {
	var out []node
	if n.XMLName.Local == tag && (cls == "" || n.attr("class") == cls) {
		out = append(out, n)
	}
	for _, c := range n.Nodes {
		out = append(out, c.all(tag, cls)...)
	}
	return out
}

// text is the text of n and its descendants.
func (n node) text() string {
	s := n.Text
	for _, c := range n.Nodes {
		s += c.text()
	}
	return s
}

func parseSVG(t *testing.T, doc string) node {
	t.Helper()
	var root node
	if err := xml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatalf("the SVG is not valid XML: %v", err)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element %v, want svg in the SVG namespace", root.XMLName)
	}
	return root
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

// valueScale reads a chart's y axis: the value at a y coordinate, from
// the first and last tick's grid line and label.
func valueScale(t *testing.T, chart node) func(y float64) float64 {
	t.Helper()
	ax := chart.all("g", "axis-y")
	if len(ax) != 1 {
		t.Fatalf("chart %s/%s: %d y axes", chart.attr("data-side"), chart.attr("data-figure"), len(ax))
	}
	lines, labels := ax[0].all("line", ""), ax[0].all("text", "tick")
	if len(lines) < 2 || len(lines) != len(labels) {
		t.Fatalf("y axis: %d grid lines, %d labels; want ≥ 2 of each, as many labels as lines", len(lines), len(labels))
	}
	y0, v0 := num(t, lines[0].attr("y1")), num(t, labels[0].text())
	y1, v1 := num(t, lines[len(lines)-1].attr("y1")), num(t, labels[len(labels)-1].text())
	if v0 != 0 || !(v1 > v0) || !(y1 < y0) {
		t.Fatalf("y axis from %v at y=%v to %v at y=%v: want 0 at the bottom, growing upwards", v0, y0, v1, y1)
	}
	return func(y float64) float64 { return v0 + (y-y0)*(v1-v0)/(y1-y0) }
}

// seriesValues reads a series' points as (time, value) through the axes.
func seriesValues(t *testing.T, chart, series node, end float64) [][2]float64 {
	t.Helper()
	val := valueScale(t, chart)
	frame := chart.all("path", "frame")[0].attr("d") // M x0 y0 V y1 H x1
	f := strings.FieldsFunc(frame, func(r rune) bool { return r == 'M' || r == 'V' || r == 'H' || r == ' ' })
	x0, x1 := num(t, f[0]), num(t, f[3])
	var out [][2]float64
	add := func(x, y string) {
		out = append(out, [2]float64{(num(t, x) - x0) / (x1 - x0) * end, val(num(t, y))})
	}
	for _, pl := range series.all("polyline", "") {
		for _, xy := range strings.Fields(pl.attr("points")) {
			x, y, _ := strings.Cut(xy, ",")
			add(x, y)
		}
	}
	for _, c := range series.all("circle", "") {
		add(c.attr("cx"), c.attr("cy"))
	}
	return out
}

func TestSVGIsValidXMLWithTwoSidesTimesThreeCharts(t *testing.T) {
	rep := fixture()
	root := parseSVG(t, SVG(`run <&> "x"`, rep))
	if got := root.all("title", "")[0].text(); got != `nbdscope run run <&> "x"` {
		t.Errorf("title %q: the run's name must survive escaping", got)
	}
	charts := root.all("g", "chart")
	want := []string{"A/throughput", "B/throughput", "A/calls", "B/calls", "A/cpu", "B/cpu"}
	if len(charts) != len(want) {
		t.Fatalf("%d charts, want %d (2 sides × 3 figures)", len(charts), len(want))
	}
	for i, c := range charts {
		if got := c.attr("data-side") + "/" + c.attr("data-figure"); got != want[i] {
			t.Errorf("chart %d is %s, want %s", i, got, want[i])
		}
		if n := len(c.all("g", "axis-x")[0].all("text", "tick")); n < 3 {
			t.Errorf("chart %s: %d time ticks, want ≥ 3", want[i], n)
		}
	}
}

// The series carry exactly the figures engine defines, at their times:
// reading the points back through the drawn axes gives each active
// sample's value (throughput, the receiver's calls, cores busy).
func TestSVGSeriesAreTheSamplesFigures(t *testing.T) {
	rep := fixture()
	root := parseSVG(t, SVG("r", rep))
	end := span(&rep)
	figure := map[string]func(s model.Sample, workload model.Workload) model.Figure{
		"throughput": func(s model.Sample, _ model.Workload) model.Figure { return s.ThroughputBps / model.GiB },
		"calls":      func(s model.Sample, _ model.Workload) model.Figure { return s.ReceiverCallsPer2MiB() },
		"cpu-client": func(s model.Sample, _ model.Workload) model.Figure { return s.Client.CoresBusy },
		"cpu-server": func(s model.Sample, _ model.Workload) model.Figure {
			if s.Server == nil {
				return model.Unknown
			}
			return s.Server.CoresBusy
		},
	}
	seen := 0
	for _, c := range root.all("g", "chart") {
		side := c.attr("data-side")
		sc := rep.Config.Sides[side[0]-'A']
		for _, ser := range c.all("g", "series") {
			fig := figure[ser.attr("data-metric")]
			var want [][2]float64
			for _, s := range rep.Samples {
				if string(s.Side) == side && s.Active && fig(s, sc.Workload).Known() {
					want = append(want, [2]float64{s.T, float64(fig(s, sc.Workload))})
				}
			}
			got := seriesValues(t, c, ser, end)
			if len(got) != len(want) || num(t, ser.attr("data-points")) != float64(len(want)) {
				t.Fatalf("%s %s: %d points (data-points %s), want %d", side, ser.attr("data-metric"), len(got), ser.attr("data-points"), len(want))
			}
			// Lines come first, then lone dots: compare as sets by time.
			for _, w := range want {
				ok := false
				for _, g := range got {
					if math.Abs(g[0]-w[0]) < end/500 && math.Abs(g[1]-w[1]) <= 0.01*math.Max(w[1], 1) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s %s: no point at t=%.2f value %.3f; got %v", side, ser.attr("data-metric"), w[0], w[1], got)
				}
			}
			seen++
		}
	}
	if seen != 8 {
		t.Errorf("%d series, want 8 (throughput, calls and 2 CPU per side)", seen)
	}
}

func TestSVGMarksAndLabelsTheChanges(t *testing.T) {
	rep := fixture()
	root := parseSVG(t, SVG("r", rep))
	for _, c := range root.all("g", "chart") {
		side := c.attr("data-side")
		var want []model.Event // the side's changes and the pair's
		for _, e := range rep.Events {
			if string(e.Side) == side || e.Side == "" {
				want = append(want, e)
			}
		}
		marks := c.all("g", "marker")
		if len(marks) != len(want) {
			t.Fatalf("chart %s/%s: %d markers, want %d", side, c.attr("data-figure"), len(marks), len(want))
		}
		labels := map[string]string{} // change number → its label's text
		for _, l := range c.all("text", "marker-label") {
			for _, n := range strings.Split(l.attr("data-changes"), ",") {
				if _, dup := labels[n]; dup {
					t.Errorf("change %s is numbered twice in one chart", n)
				}
				labels[n] = l.text()
			}
		}
		for i, m := range marks {
			if got := num(t, m.attr("data-t")); math.Abs(got-want[i].T) > 1e-3 {
				t.Errorf("marker at %v, want %v", got, want[i].T)
			}
			label, ok := labels[m.attr("data-change")]
			if !ok {
				t.Errorf("chart %s/%s: change %s has no label", side, c.attr("data-figure"), m.attr("data-change"))
			}
			// Three changes far apart: the top chart has room to name each.
			if c.attr("data-figure") == "throughput" && !strings.Contains(label, eventText(want[i])) {
				t.Errorf("top chart's marker label %q does not name the change %q", label, eventText(want[i]))
			}
		}
	}
	caption := root.all("g", "caption")[0].text()
	for _, s := range []string{"linux/amd64", "Linux 6.1.0", "2 cores", "unix SO_SNDBUF default 208k",
		"server SO_SNDBUF 2m (eff. 4m)", "client SO_SNDBUF default (eff. 208k)",
		"placement split (load CPUs 0, server CPUs 1)", "change 1 at 4.00s, side B: sndbuf 2m → 64k",
		"change 2 at 6.00s, both sides: mode alternate → concurrent"} {
		if !strings.Contains(caption, s) {
			t.Errorf("caption lacks %q:\n%s", s, caption)
		}
	}
}

// A run without samples or events (a crash at the start) still renders:
// six empty charts that say so, valid XML, no made-up line.
func TestSVGEmptyRun(t *testing.T) {
	root := parseSVG(t, SVG("empty", model.Report{}))
	charts := root.all("g", "chart")
	if len(charts) != 6 {
		t.Fatalf("%d charts, want 6", len(charts))
	}
	for _, c := range charts {
		if len(c.all("polyline", "")) != 0 || len(c.all("circle", "")) != 0 {
			t.Errorf("chart %s/%s draws a line without samples", c.attr("data-side"), c.attr("data-figure"))
		}
		if len(c.all("text", "no-data")) != 1 {
			t.Errorf("chart %s/%s does not say it has no data", c.attr("data-side"), c.attr("data-figure"))
		}
	}
}

// Samples with a time or figure that is not a number are left out, not
// drawn as NaN coordinates (which would make the SVG unrenderable).
func TestSVGSkipsNonFiniteInput(t *testing.T) {
	rep := fixture()
	rep.Samples[0].T = math.NaN()
	rep.Samples[2].ThroughputBps = model.Figure(math.Inf(1))
	rep.Events = append(rep.Events, model.Event{T: math.Inf(1), Side: "A", Setting: "x"})
	doc := SVG("r", rep)
	parseSVG(t, doc)
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(doc, bad) {
			t.Errorf("the SVG contains %q", bad)
		}
	}
}

// Caption lines are wrapped to fit the document: none is longer than
// captionChars, and no word is lost.
func TestSVGCaptionWraps(t *testing.T) {
	rep := fixture()
	rep.Platform.CPUModel = strings.Repeat("Very Long CPU Model Name ", 12)
	lines := captionLines(&rep, sidesOf(&rep))
	joined := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	for _, l := range lines {
		if n := len([]rune(l)); n > captionChars {
			t.Errorf("caption line of %d characters: %q", n, l)
		}
	}
	if strings.Count(joined, "Very Long CPU Model Name") != 12 {
		t.Error("wrapping lost words")
	}
}

// An hour of samples draws with a few points per pixel column, keeping
// each column's extremes: the peak and the dip stay visible.
func TestSVGThinsLongRuns(t *testing.T) {
	var rep model.Report
	rep.Config.Sides[0] = model.SideConfig{Name: "A", Workload: model.WorkRead}
	rep.Config.Sides[1] = model.SideConfig{Name: "B", Workload: model.WorkRead}
	n := 14400
	for k := 1; k <= n; k++ {
		v := model.Figure(1 << 30)
		switch k {
		case 5000:
			v = 3 << 30 // a peak
		case 9000:
			v = 1 << 20 // a dip
		}
		rep.Samples = append(rep.Samples, model.Sample{T: float64(k) / 4, Side: "A", Active: true, Figures: model.Figures{Seconds: 0.25,
			ThroughputBps: v, Client: model.Process{RecvCallsPer2MiB: 8, CoresBusy: 1}}})
	}
	doc := SVG("long", rep)
	if len(doc) > 400<<10 {
		t.Errorf("an hour of samples makes a %d KiB document", len(doc)>>10)
	}
	root := parseSVG(t, doc)
	chart := root.all("g", "chart")[0]
	ser := chart.all("g", "series")[0]
	got := seriesValues(t, chart, ser, span(&rep))
	if len(got) > 4*plotW {
		t.Errorf("%d points drawn for %d pixel columns", len(got), plotW)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range got {
		lo, hi = math.Min(lo, p[1]), math.Max(hi, p[1])
	}
	if math.Abs(hi-3) > 0.03 || lo > 0.01 {
		t.Errorf("drawn range %.3f…%.3f GiB/s, want the peak 3 and the dip ~0.001 kept", lo, hi)
	}
	if ser.attr("data-points") != strconv.Itoa(n) {
		t.Errorf("data-points %s, want the %d samples", ser.attr("data-points"), n)
	}
}

// A partial run says so, with its reason, where a reader looks first.
func TestSVGMarksAPartialRun(t *testing.T) {
	rep := fixture()
	rep.Partial, rep.PartialReason = true, "side B load crashed at 3.2s"
	root := parseSVG(t, SVG("cut", rep))
	p := root.all("text", "partial")
	if len(p) != 1 || !strings.Contains(p[0].text(), "partial run: side B load crashed at 3.2s") {
		t.Errorf("partial marking %v", p)
	}
	if len(parseSVG(t, SVG("whole", fixture())).all("text", "partial")) != 0 {
		t.Error("a complete run is marked partial")
	}
}
