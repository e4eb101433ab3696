package engine

import "nbdscope/model"

// Which way each live sample's bulk data went (model.Flow): our load's is
// its workload's, but an interval in which the workload changed direction
// mixed the two receivers, and is marked so before anyone sees it (the
// explorer, run's --intervals, the recorder); a real client's (an exec
// side) is the way its server saw it move its data (exec_side.go).

// settleSample gives a sample about to be emitted its flow. Samples of a
// side are emitted one at a time, by its poll.
func (p *Pair) settleSample(smp *model.Sample) {
	s := p.sideOf(smp.Side)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fl := s.clientFlow(); fl != "" && smp.Settings.Exec == s.cfg.Exec {
		// A real client's data goes the way it moved it, whatever the
		// side's workload says: its labels, receiver and sender follow.
		smp.Flow = fl
		if smp.Turn != nil {
			smp.Turn.Flow = fl
		}
	}
	s.lastFlow = smp.SettleFlow(s.lastFlow)
}

// sideOf is the side a sample or event names; nil for none.
func (p *Pair) sideOf(id model.SideID) *side {
	if i := id.Index(); i >= 0 {
		return p.sides[i]
	}
	return nil
}
