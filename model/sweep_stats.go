package model

import "nbdscope/stats"

// A sweep row shows its median measurement's figures; beside them it keeps
// every measurement's time, CPU and throughput, and hyperfine's summary of
// the times (mean ± σ, min … max, median, n), so that a row says how much
// its repeats agreed and a hyperfine file can be written from it.

// SweepMeasurement is one measured repeat of a row: its wall time, the
// client's CPU (our load process; an exec sweep's client and everything it
// waited for) and its throughput, in the order measured.
type SweepMeasurement struct {
	Seconds       float64 `json:"seconds"`
	ClientUserS   float64 `json:"client_user_s"`
	ClientSysS    float64 `json:"client_sys_s"`
	ThroughputBps Figure  `json:"throughput_bps"`
}

// SweepSpread is what a row adds about its repeats (embedded in SweepRow,
// its fields at the row's level in JSON).
type SweepSpread struct {
	// Measurements are every measured repeat; empty in a sweep saved
	// before they were kept.
	Measurements []SweepMeasurement `json:"measurements,omitempty"`
	// TimeS is the summary of the measurements' wall times (stats.Of):
	// σ is null with one measurement.
	TimeS *stats.Summary `json:"time_s,omitempty"`
}

// SetSpread fills the row's spread from its measurements.
func (r *SweepRow) SetSpread(ms []SweepMeasurement) {
	r.Measurements = ms
	times := make([]float64, len(ms))
	for i, m := range ms {
		times[i] = m.Seconds
	}
	s := stats.Of(times)
	r.TimeS = &s
}

// ThroughputStats is the summary of the row's measurements' throughputs;
// N is 0 when the row has none kept (a sweep saved before they were).
func (r SweepRow) ThroughputStats() stats.Summary {
	xs := make([]float64, 0, len(r.Measurements))
	for _, m := range r.Measurements {
		if m.ThroughputBps.Known() {
			xs = append(xs, float64(m.ThroughputBps))
		}
	}
	return stats.Of(xs)
}
