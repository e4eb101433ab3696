package ui

import (
	"math"

	"nbdscope/model"
	"nbdscope/plot"
)

// The charted metrics of a sample.
const (
	mTput       = iota // bytes/s
	mCalls             // receiver calls per 2 MiB
	mCPUClient         // cores busy
	mCPUServer         // cores busy
	mP50               // ms
	mP99               // ms
	mSend              // sender's send calls per 2 MiB (writes only)
	mWakeClient        // client's voluntary context switches per 2 MiB
	mWakeServer        // server's
	mFullPct           // share of fill samples the send buffer was full, %
	mEmptyPct          // share it was empty, %
	nMetrics
)

// point is one active sample, reduced to the charted figures (NaN where a
// figure is unknown). A sample covers [t-dur, t]; write is its stamp's
// direction (the sender's calls are charted for writes).
type point struct {
	t, dur float64
	v      [nMetrics]float64
	write  bool
}

// metricFigure is the entry of the table of figures each metric charts.
var metricFigure = [nMetrics]string{
	mTput:       model.FigThroughput,
	mCalls:      model.FigReceiverCalls,
	mCPUClient:  model.FigClientCores,
	mCPUServer:  model.FigServerCores,
	mP50:        model.FigP50,
	mP99:        model.FigP99,
	mSend:       model.FigSenderCalls,
	mWakeClient: model.FigClientWake,
	mWakeServer: model.FigServerWake,
	mFullPct:    model.FigFullPct,
	mEmptyPct:   model.FigEmptyPct,
}

func num(f model.Figure) float64 {
	if !f.Known() {
		return math.NaN()
	}
	return float64(f)
}

// pointOf reduces a sample; its own stamp picks the receiving process.
func pointOf(s model.Sample) point {
	p := point{t: s.T, dur: s.Seconds, write: s.Direction() == model.FlowWrite}
	// Each metric through its entry: a server's figure unknown without
	// a server, the fill unknown when not sampled (a gap, not 0).
	for m, name := range metricFigure {
		p.v[m] = num(model.FigureOf(name).Get(&s.Figures))
	}
	if !p.write { // the sender's calls are charted for writes only
		p.v[mSend] = math.NaN()
	}
	for i, v := range p.v {
		if v < 0 { // a counter glitch is not a figure
			p.v[i] = math.NaN()
		}
	}
	if p.dur < 0 || math.IsNaN(p.dur) {
		p.dur = 0
	}
	return p
}

// history is one side's points over the chart window (and a little more).
// It holds a few hundred points; nothing grows with the run's length.
type history struct {
	pts []point
}

// add appends p and forgets points that ended before keepFrom.
func (h *history) add(p point, keepFrom float64) {
	h.pts = append(h.pts, p)
	i := 0
	for i < len(h.pts)-1 && h.pts[i].t < keepFrom {
		i++
	}
	if i > 0 {
		h.pts = append(h.pts[:0], h.pts[i:]...)
	}
}

// maxIn returns the largest known value of metric in [t0, t1] (NaN if none).
func (h *history) maxIn(metric int, t0, t1 float64) float64 {
	mx := math.NaN()
	for _, p := range h.pts {
		if p.t < t0 || p.t-p.dur > t1 {
			continue
		}
		if v := p.v[metric]; !math.IsNaN(v) && (math.IsNaN(mx) || v > mx) {
			mx = v
		}
	}
	return mx
}

// bucket averages metric into w columns spanning [t0, t0+span], divided by
// div. A sample fills every column its interval touches, so consecutive
// samples draw a continuous line; columns without samples are NaN (a gap:
// the side was paused, off-turn or had not started).
func (h *history) bucket(metric int, t0, span float64, w int, div float64) []float64 {
	cols := plot.NewColumns(t0, span, div, w)
	for _, p := range h.pts {
		v := p.v[metric]
		if math.IsNaN(v) || p.t < t0 || p.t-p.dur > t0+span {
			continue
		}
		cols.Add(p.t-p.dur, p.t, v)
	}
	return cols.Means()
}
