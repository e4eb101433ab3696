package model

import "nbdscope/stats"

// Spread is how steady a side was over a stretch: the summary (stats.Of)
// of its samples' throughput and of its receiver's receive calls per
// 2 MiB, over the samples in which the load ran (active, not warming up)
// under the stretch's settings: how steady, as hyperfine says it. Whether
// two sides differ is judged over batches of samples, not over samples
// (batches.go).
type Spread struct {
	ThroughputBps    stats.Summary `json:"throughput_bps"`
	RecvCallsPer2MiB stats.Summary `json:"recv_calls_per_2mib"` // the receiver of the bulk data
}

// SpreadOf is the spread of the samples of side that keep (nil: every
// steady sample of the side).
func SpreadOf(samples []Sample, side SideID, keep func(Sample) bool) Spread {
	var tput, recv []float64
	for _, s := range samples {
		if s.Side != side || !s.Steady() || (keep != nil && !keep(s)) {
			continue
		}
		tput = append(tput, float64(s.ThroughputBps))
		recv = append(recv, float64(s.ReceiverCallsPer2MiB()))
	}
	return Spread{ThroughputBps: stats.Of(tput), RecvCallsPer2MiB: stats.Of(recv)}
}

// Steady says a sample is one of a steady stretch: the load ran (active),
// not warming up, no setting changed during it. Spreads are over these.
func (s Sample) Steady() bool { return s.Active && !s.Warming && !s.Changed }
