package engine

import "nbdscope/model"

// addSpreads gives each side's summary and segments of rep their spread.
// A segment's samples are those of its side stamped with its settings
// that ended within it (a sample ends at its T, and the segment's first
// sample starts it).
func addSpreads(rep *model.Report) {
	for i := range rep.Sides {
		sd := &rep.Sides[i]
		if !sd.Summary.ThroughputBps.Known() {
			continue // no throughput (a real client that moved nothing): no spread to compare
		}
		whole := model.SpreadOf(rep.Samples, sd.ID(), nil)
		sd.Summary.Spread = &whole
		for j := range sd.Segments {
			g := &sd.Segments[j]
			sp := model.SpreadOf(rep.Samples, sd.ID(), func(s model.Sample) bool {
				return s.Settings == g.Settings && s.T > g.From && s.T <= g.To+1e-9
			})
			g.Spread = &sp
		}
	}
}
