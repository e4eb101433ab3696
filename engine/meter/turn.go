package meter

import "nbdscope/model"

// A side's turn figures (model.Sample.Turn): its totals from the first
// sample of a turn (its load ran, or warmed its buffers, after samples it
// did not) through the samples after the turn, which hold the drain of
// its requests in flight, added as the run's summary adds every sample.
// A waiting side's latest sample alone is the drain: it showed 0.58
// server calls per 2 MiB against the run's 3.0. A sample that straddles
// a change of the settings starts them again, after it, as a segment
// does (it mixes the two settings).

// addToTurn adds an interval to the side's turn; running says its load
// ran (or warmed) in it, changed that the settings changed in it.
func (m *Meter) addToTurn(d Delta, running, changed bool) {
	newTurn := running && !m.inTurn
	m.inTurn = running
	switch {
	case changed:
		m.turn = totals{}
		return
	case newTurn:
		m.turn = totals{}
	}
	m.turn.add(d)
}

// turnFigures are the turn's figures, with the settings, buffers and
// placement of smp (the latest sample); nil when the turn has none yet.
func (m *Meter) turnFigures(smp model.Figures, sp Span) *model.Figures {
	if m.turn.empty() {
		return nil
	}
	f := m.turn.figures(sp.HasServer)
	ExecClient(sp.Exec, sp.ExecCounted, &f)
	f.Settings, f.SndBuf, f.Placement, f.TargetServer = smp.Settings, smp.SndBuf, smp.Placement, smp.TargetServer
	return &f
}
