// Package plot draws a saved run's figures over time: as a self-contained
// SVG document (runs export --format svg) and as text for a terminal
// (runs compare). It is pure — a report in, text out — and takes every
// figure from model's single definitions (Sample.ThroughputBps,
// Sample.ReceiverCallsPer2MiB, Process.CoresBusy); it derives none itself.
package plot

import (
	"math"

	"nbdscope/model"
	"nbdscope/phrase"
)

// metric is one charted figure of a sample.
type metric int

const (
	mThroughput metric = iota // bytes/s
	mCalls                    // receiver's receive calls per 2 MiB
	mCPUClient                // cores busy, load process
	mCPUServer                // cores busy, server process
	mFillFull                 // send buffer full, % of fill samples
	mFillEmpty                // send buffer empty, % of fill samples
)

// metricFigure is the entry of the table of figures each metric charts.
var metricFigure = [...]string{
	mThroughput: model.FigThroughput,
	mCalls:      model.FigReceiverCalls,
	mCPUClient:  model.FigClientCores,
	mCPUServer:  model.FigServerCores,
	mFillFull:   model.FigFullPct,
	mFillEmpty:  model.FigEmptyPct,
}

// value reads metric m of a sample through its entry of the table of
// figures; the sample's own stamp picks the receiving process (the
// side's workload is no longer needed for it). Unknown (NaN) when not
// measured, and for negative values (a counter glitch is not a figure).
func value(s model.Sample, m metric, _ model.Workload) float64 {
	f := model.FigureOf(metricFigure[m]).Get(&s.Figures)
	if !f.Known() || f < 0 {
		return math.NaN()
	}
	return float64(f)
}

// point is one active sample of one figure, at the sample's end time T.
type point struct{ t, v float64 }

// segment is a run of consecutive active, measured samples: a line is
// drawn through it and broken between segments (the side was paused,
// off-turn, or the figure was not measured).
type segment []point

// side is one side of a report, as the charts need it.
type side struct {
	name     string
	id       model.SideID // SideAt its position: what its samples and events carry
	workload model.Workload
	samples  []model.Sample // this side's samples, in time order
	events   []change       // changes of this side or of the pair
}

// change is an event with its number in the run (1 = the first change).
type change struct {
	n int
	model.Event
}

// changesOf are a report's changes, numbered from 1: its events with a
// time, less the finished runs of an exec side's client, which change
// nothing (the caption counts them).
func changesOf(rep *model.Report) []change {
	var out []change
	for _, e := range rep.Events {
		if finite(e.T) && e.Setting != model.ExecRunEvent {
			out = append(out, change{len(out) + 1, e})
		}
	}
	return out
}

// sidesOf returns a report's sides, A then B, with their samples and
// events. A side is named by its configuration, else by its summary,
// else by its position.
func sidesOf(rep *model.Report) []side {
	stamped := rep.WithStamps()
	rep = &stamped
	var out []side
	for i := range rep.Config.Sides {
		name := rep.Config.Sides[i].Name
		if name == "" && i < len(rep.Sides) {
			name = rep.Sides[i].Name
		}
		if name == "" {
			name = string(rune('A' + i))
		}
		out = append(out, side{name: name, id: model.SideAt(i), workload: rep.Config.Sides[i].Workload})
	}
	changes := changesOf(rep)
	for k := range out {
		sd := &out[k]
		for _, s := range rep.Samples {
			if s.Side == sd.id && finite(s.T) {
				sd.samples = append(sd.samples, s)
			}
		}
		for _, c := range changes {
			if c.Side == model.WholePair || c.Side == sd.id {
				sd.events = append(sd.events, c)
			}
		}
	}
	return out
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// segments splits a side's samples of metric m into drawable runs: an
// inactive sample or an unknown value ends a run.
func (sd side) segments(m metric) []segment {
	var out []segment
	var cur segment
	for _, s := range sd.samples {
		v := math.NaN()
		if s.Active {
			v = value(s, m, sd.workload)
		}
		if math.IsNaN(v) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, point{s.T, v})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// maxOf returns the largest value over segments (NaN when there is none).
func maxOf(segs ...[]segment) float64 {
	mx := math.NaN()
	for _, ss := range segs {
		for _, sg := range ss {
			for _, p := range sg {
				if math.IsNaN(mx) || p.v > mx {
					mx = p.v
				}
			}
		}
	}
	return mx
}

// span returns the time the report covers: from 0 to its last sample or
// event (at least 1 s, so that an empty run still has an axis).
func span(reps ...*model.Report) float64 {
	end := 1.0
	for _, r := range reps {
		for _, s := range r.Samples {
			if finite(s.T) {
				end = max(end, s.T)
			}
		}
		for _, e := range r.Events {
			if finite(e.T) {
				end = max(end, e.T)
			}
		}
	}
	return end
}

// eventText is a change as a label: "sndbuf 2m→64k" (the chart names
// its run apart).
func eventText(e model.Event) string { return phrase.EventChange(e) }
