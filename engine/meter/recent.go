package meter

import "nbdscope/model"

// The recent figures (model.Sample.Recent): the side's samples in which
// its load ran over the last model.RecentSeconds of unchanged settings,
// added by the one accumulator. The explorer's pace and fill rows show
// them, where it summed its last samples itself.

// recentSpan is a sample's delta and when it ended.
type recentSpan struct {
	t float64
	d Delta
}

// addRecent keeps an interval for the recent figures: an active one
// under the same settings as the last, a change starting them over (the
// sample across it mixes the two settings and is left out).
func (m *Meter) addRecent(t float64, d Delta, active, changed bool) {
	if changed {
		m.recent = m.recent[:0]
		return
	}
	if !active {
		return
	}
	m.recent = append(m.recent, recentSpan{t: t, d: d})
	keep := 0
	for keep < len(m.recent) && m.recent[keep].t <= t-model.RecentSeconds {
		keep++
	}
	m.recent = append(m.recent[:0], m.recent[keep:]...)
}

// recentFigures are the recent spans' figures, with smp's settings,
// buffers and placement; nil when there are none.
func (m *Meter) recentFigures(smp model.Figures, sp Span) *model.Figures {
	if len(m.recent) == 0 {
		return nil
	}
	var t totals
	for _, r := range m.recent {
		t.add(r.d)
	}
	f := t.figures(sp.HasServer)
	ExecClient(sp.Exec, sp.ExecCounted, &f)
	f.Settings, f.SndBuf, f.Placement, f.TargetServer = smp.Settings, smp.SndBuf, smp.Placement, smp.TargetServer
	return &f
}
