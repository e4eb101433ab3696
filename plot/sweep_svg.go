package plot

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

// The SVG of a saved sweep (runs export SWEEP --format svg): the chart a
// person posts with a patch. A bar per buffer size of the time it took
// (the median of its runs, min–max as whiskers where the sweep kept
// them), the fastest size and those within 5% of it in their own colour;
// under it the send calls per 2 MiB of the sender of the bulk data, the
// figure the buffer size moves. The title names what was swept and the
// subtitle the command or load, the method, the platform and the time, so
// that the picture stands on its own.

const (
	swW      = 960 // document width
	swLeft   = 84  // plot area's left edge
	swRight  = 32
	swPlotW  = swW - swLeft - swRight
	swTimeH  = 260 // plot heights
	swCallsH = 110
)

// Colours of the bars: a size, the fastest, and one within 5% of it.
const (
	barColour    = "#006D9C"
	barBest      = "#B04E00"
	barNearBest  = "#E3A070"
	whiskerColor = "#222222"
)

// sweepBar is one size of a sweep, as the charts draw it.
type sweepBar struct {
	buffer, eff  string  // "2m", "eff. 4m"
	gibps        string  // "2.78 GiB/s", "" when unknown
	runs         int     // measurements behind the median
	secs, lo, hi float64 // median time, min–max (NaN: not kept)
	calls        float64 // the sender's send calls per 2 MiB (NaN: not measured)
	best, near   bool    // the optimum (or the fastest, unjudged); within 5% of it
	bestWord     string  // what the best bar is: "optimum", "fastest"
	noisy        bool    // other processes slowed its measurements
}

func sweepBars(sw *model.SweepReport) []sweepBar {
	var out []sweepBar
	for _, r := range sw.Rows {
		b := sweepBar{buffer: r.Buffer, runs: r.Repeats, secs: math.NaN(), lo: math.NaN(), hi: math.NaN(), calls: math.NaN()}
		if r.Effective > 0 {
			b.eff = "eff. " + units.FormatSize(int64(r.Effective))
		}
		if t := r.ThroughputBps; t.Known() && t > 0 {
			b.gibps = (t / model.GiB).Fixed(2) + " GiB/s"
		}
		if r.Seconds > 0 && finite(r.Seconds) {
			b.secs = r.Seconds
		}
		if e := r.Exec; e != nil && len(e.Runs) > 1 && e.SecondsMin > 0 && e.SecondsMax >= e.SecondsMin {
			b.lo, b.hi = e.SecondsMin, e.SecondsMax
		} else if ts := r.TimeS; ts != nil && ts.N > 1 && ts.Min > 0 && ts.Max >= ts.Min {
			// Our load's rows keep every measurement now (hyperfine's
			// summary): their min–max are whiskers too.
			b.lo, b.hi = ts.Min, ts.Max
		}
		if c := r.Figures.SenderCallsPer2MiB(); c.Known() && c >= 0 {
			b.calls = float64(c)
		}
		if o := sw.Optimum; o != nil {
			// The verdict's (model.OptimumVerdict): a bar is marked the
			// optimum only when it is told apart beyond noise; the fastest
			// of one measurement a size only as the fastest.
			b.best, b.bestWord = r.Buffer == o.Named(), "optimum"
			if o.Verdict.Kind == model.OptimumUnjudged {
				b.best, b.bestWord = r.Buffer == o.Buffer, "fastest"
			}
			b.near = !b.best && containsString(o.Within5Pct, r.Buffer)
		}
		b.noisy = r.OtherCoresBusy != nil && r.OtherCoresBusy.Known() && *r.OtherCoresBusy >= model.OtherCoresNoisy
		out = append(out, b)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SweepSVG renders a saved sweep (rep.Sweep, with rep's platform) as a
// self-contained SVG document; a report without a sweep renders as one
// that says so.
func SweepSVG(name string, rep model.Report) string {
	sw := rep.Sweep
	if sw == nil {
		sw = &model.SweepReport{}
	}
	bars := sweepBars(sw)
	head := sweepHeadLines(sw, rep)
	notes := sweepNotes(sw, bars)
	legend := legendLines(bars)
	y := 58 + 18*len(head) + 14 // the legend's baseline
	timeY := float64(y + 18*(len(legend)-1) + 46)
	callsY := timeY + swTimeH + 124
	height := int(callsY) + swCallsH + 70 + 18*len(notes)
	var d svgDoc
	d.begin(swW, height, "nbdscope sweep "+name)
	d.sweepHeader(name, sw, head)
	d.sweepLegend(legend, y)
	d.barChart(barChart{id: "time", title: timeTitle(sw), unit: "s", value: func(b sweepBar) (float64, float64, float64) { return b.secs, b.lo, b.hi },
		format: secondsText, height: swTimeH, xTitle: sweptAxis(sw.Spec.Setting)}, bars, timeY)
	d.barChart(barChart{id: "calls", title: callsTitle(sw), unit: "calls", value: func(b sweepBar) (float64, float64, float64) { return b.calls, math.NaN(), math.NaN() },
		format: func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }, height: swCallsH}, bars, callsY)
	d.f(`<g class="caption" font-size="12" fill="#333333">` + "\n")
	fill := ""
	for i, l := range notes {
		x := 24
		switch {
		case strings.HasPrefix(l, " "): // a continuation, indented (SVG collapses blanks)
			x, l = 44, strings.TrimLeft(l, " ")
		case strings.HasPrefix(l, "▲"): // a warning, in red to its end
			fill = ` fill="#C62828"`
		default:
			fill = ""
		}
		d.f(`<text x="%d" y="%d"%s>%s</text>`+"\n", x, int(callsY)+swCallsH+56+18*i, fill, esc(l))
	}
	d.f("</g>\n</svg>\n")
	return d.String()
}

// sweepHeadLines are the subtitle's lines: what ran, how it was measured,
// where and when.
func sweepHeadLines(sw *model.SweepReport, rep model.Report) []string {
	sd := sw.Config.Sides[0]
	var what string
	if x := sw.Spec.Exec; x != nil {
		what = fmt.Sprintf("%s against nbdscope's server (%s backend, %s export, a fresh server per size)",
			x.Command, orNA(sd.Backend), units.FormatSize(sw.Spec.Bytes))
	} else {
		conns := "connections"
		if sd.Connections == 1 {
			conns = "connection"
		}
		what = fmt.Sprintf("nbdscope's load: %s over %s, %d %s × %d in flight × %s requests, consume %s, %s backend",
			sd.Workload, orNA(string(sd.Transport)), sd.Connections, conns, sd.InFlight, units.FormatSize(int64(sd.RequestSize)), sd.Get(model.SetConsume), orNA(sd.Backend))
	}
	how := fmt.Sprintf("each size: the median of %s", runsText(sw))
	if x := sw.Spec.Exec; x != nil {
		how += fmt.Sprintf(" after %d warm-up", x.Warmup)
	} else {
		how += fmt.Sprintf(" of %s each, after a warm-up", units.FormatBytes(float64(sw.Spec.Bytes)))
	}
	how += "; the sizes measured in rounds"
	if len(sw.Rows) > 0 {
		pl := sw.Rows[0].Placement
		if pl.Setting == "" {
			pl = sw.Rows[0].Figures.Placement // an exec sweep's
		}
		if pl.Setting != "" {
			how += fmt.Sprintf("; placement %s (client CPU %s, server CPU %s)", pl.Setting, pl.LoadCPUs, pl.ServerCPUs)
		}
	}
	var when []string
	if t := sw.Time; !t.IsZero() {
		when = append(when, t.UTC().Format(time.DateTime+" MST"))
	}
	if v := sw.Nbdscope; v != "" {
		when = append(when, "nbdscope "+v)
	}
	lines := wrap(what, 150)
	lines = append(lines, wrap(how, 150)...)
	lines = append(lines, "platform: "+platformText(rep.Platform))
	if e := sw.MacOS; e != nil {
		lines = append(lines, wrap(phrase.MacOSEmulation(*e), 150)...)
	}
	if len(when) > 0 {
		lines = append(lines, strings.Join(when, " · "))
	}
	return lines
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// runsText is "3 runs", or the range when the rows differ (a sweep cut
// short: "1–3 runs").
func runsText(sw *model.SweepReport) string {
	lo, hi := 0, 0
	for i, r := range sw.Rows {
		if i == 0 || r.Repeats < lo {
			lo = r.Repeats
		}
		hi = max(hi, r.Repeats)
	}
	noun := "runs"
	if sw.Spec.Exec == nil {
		noun = "measurements"
	}
	switch {
	case hi == 0:
		return strconv.Itoa(sw.Spec.Repeat) + " " + noun
	case lo == hi && hi == 1:
		return "1 " + strings.TrimSuffix(noun, "s") + " (no spread)"
	case lo == hi:
		return strconv.Itoa(hi) + " " + noun
	}
	return fmt.Sprintf("%d–%d %s (the sweep stopped early)", lo, hi, noun)
}

// sweepHeader writes the title, the subtitle lines and, for a partial
// sweep, why it is partial.
func (d *svgDoc) sweepHeader(name string, sw *model.SweepReport, head []string) {
	if name == "" {
		name = "(unsaved)"
	}
	d.f(`<text class="title" x="24" y="34" font-size="20" font-weight="bold">nbdscope sweep %s: time per %s size</text>`+"\n",
		esc(name), esc(sweptOption(sw.Spec.Setting)))
	for i, l := range head {
		d.f(`<text class="subtitle" x="24" y="%d" fill="#555555">%s</text>`+"\n", 58+18*i, esc(strings.TrimLeft(l, " ")))
	}
	if sw.Partial {
		d.partialBanner(swW-24, 34, "sweep", sw.PartialReason)
	}
}

// sweptOption names the swept buffer as the socket option it sets.
func sweptOption(setting string) string {
	switch setting {
	case model.SetClientSndBuf:
		return "client SO_SNDBUF"
	case model.SetClientRcvBuf:
		return "client SO_RCVBUF"
	case model.SetServerRcvBuf:
		return "server SO_RCVBUF"
	}
	return "server SO_SNDBUF"
}

// sweptAxis is the title of the sizes' axis.
func sweptAxis(setting string) string {
	return sweptOption(setting) + " as requested; under it the effective size (read back) and the throughput"
}

func timeTitle(sw *model.SweepReport) string {
	if sw.Spec.Exec != nil {
		return "wall time of one run of the command (s), lower is better"
	}
	return fmt.Sprintf("time to move %s (s), lower is better", units.FormatBytes(float64(sw.Spec.Bytes)))
}

func callsTitle(sw *model.SweepReport) string {
	// The rows' own sender: an exec sweep's is what its client did (the
	// payload its server saw), whatever the workload says.
	fl, seen := model.FlowOf(sw.Config.Sides[0].Workload), false
	for _, r := range sw.Rows {
		if r.Figures.Flow == "" && r.Figures.Settings.Workload == "" {
			continue // not stamped (a sweep saved before rows were): the sweep's workload
		}
		if d := r.Figures.Direction(); !seen {
			fl, seen = d, true
		} else if d != fl {
			fl = model.FlowChanged
		}
	}
	if fl == model.FlowChanged {
		return "send calls per 2 MiB of payload, of each row's sender of the bulk data"
	}
	return "send calls per 2 MiB of payload, of the " + fl.Sender() + " (the sender of the bulk data)"
}

func secondsText(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " s"
	}
	if v >= 1 {
		return strconv.FormatFloat(v, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + " s"
}
