package engine

import "nbdscope/model"

// Which way each live sample's bulk data went (model.Flow) is the
// meter's (engine/meter's flow.go): it is settled before anyone sees the
// sample (the explorer, run's --intervals, the recorder).

// settleSample gives a sample about to be emitted its flow. Samples of a
// side are emitted one at a time, by its poll.
func (p *Pair) settleSample(smp *model.Sample) {
	s := p.sideOf(smp.Side)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meter.SettleFlow(smp, s.cfg.Exec)
}

// sideOf is the side a sample or event names; nil for none.
func (p *Pair) sideOf(id model.SideID) *side {
	if i := id.Index(); i >= 0 {
		return p.sides[i]
	}
	return nil
}
