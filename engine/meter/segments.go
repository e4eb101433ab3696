package meter

import "nbdscope/model"

// segTotals accumulate one stretch of unchanged settings.
type segTotals struct {
	stamp     model.Stamp
	from, to  float64
	tot       totals
	buf       model.Buffers
	placement model.Placement
	hasServer bool
}

// segment returns the totals of the segment a sample stamped st falls in:
// the last one if it has the same stamp, else a new one.
func (m *Meter) segment(st model.Stamp, from, to float64, smp model.Sample) *totals {
	n := len(m.segs)
	if n == 0 || m.segs[n-1].stamp != st {
		m.segs = append(m.segs, segTotals{stamp: st, from: from})
		n++
	}
	g := &m.segs[n-1]
	g.to, g.buf, g.placement, g.hasServer = to, smp.SndBuf, smp.Placement, smp.Server != nil || smp.ServerNA != nil
	return &g.tot
}

// Summary is the side's figures over the whole run (active time only;
// up to the last Settle where the payload settles by runs), with what the consume mode found, and whether its settings changed
// (more than one segment).
func (m *Meter) Summary(hasServer, exec, counted bool) (f model.Figures, consumed *model.ConsumeCounts, changed bool) {
	t := m.tot
	if m.settled != nil {
		t = *m.settled
	}
	f = t.figures(hasServer)
	ExecClient(exec, counted, &f)
	return f, t.consumedCounts(), len(m.segs) > 1
}

// Segments are the side's summaries per stretch of unchanged settings,
// each with what the consume mode found in it.
func (m *Meter) Segments(exec, counted bool) []model.Segment {
	var out []model.Segment
	for _, g := range m.segs {
		sum := model.Summary{Figures: g.tot.figures(g.hasServer), Consume: g.stamp.Consume, Consumed: g.tot.consumedCounts()}
		ExecClient(exec, counted, &sum.Figures)
		sum.Settings, sum.SndBuf, sum.Placement = g.stamp, g.buf, g.placement
		out = append(out, model.Segment{From: g.from, To: g.to, Summary: sum})
	}
	return out
}
