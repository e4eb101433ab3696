package model

// A --target process that serves both sides (--target for both, or
// --target-a and --target-b naming one server) is counted from outside,
// as a whole: its calls, CPU and wake-ups over a sample are of whichever
// loads ran in it. Where one side's load alone ran they are that side's
// (the engine reads the process at each turn switch, between the loads,
// so that the sample spanning it is split there: engine/shared.go);
// where both ran (every sample in concurrent mode; in alternate mode one
// whose switch could not be read between the loads) nothing measured
// splits them, so the sample's server figures are unknown (Server nil,
// ServerNA the reason) rather than
// the whole process's given to both sides, which summed to 14% more calls
// than perf counted on the process. A span's server figures are then over
// its samples whose server counts are known, with those samples' payload
// and seconds (ServerBytes, ServerSeconds), never the counts of some
// samples over the bytes of all.

// serverNAShared is the reason a sample's server figures are unknown: one
// process serves both sides and both loads ran in the sample (worded by
// the phrasebook, kind ReasonSharedServer).
func serverNAShared() *Reason { return &Reason{Kind: ReasonSharedServer} }

// ServerBase is the payload and load seconds Server's figures are over:
// the span's own, or, where some samples' server counts were not
// attributed (ServerUnattributed), those of the others.
func (f *Figures) ServerBase() (bytes uint64, seconds float64) {
	if f.ServerUnattributed > 0 {
		return f.ServerBytes, f.ServerSeconds
	}
	return f.Bytes, f.Seconds
}

// SetServerSpan sets the server's figures of a span from its known
// samples' counts c, payload and seconds, unattributed the samples whose
// counts were not attributed. None known: Server is nil, ServerNA says
// why.
func (f *Figures) SetServerSpan(c Counters, bytes uint64, seconds, busy float64, unattributed int) {
	f.ServerUnattributed, f.ServerBytes, f.ServerSeconds, f.ServerNA = unattributed, 0, 0, nil
	if unattributed > 0 {
		f.ServerBytes, f.ServerSeconds = bytes, seconds
	}
	if unattributed > 0 && bytes == 0 && seconds == 0 {
		f.Server, f.ServerNA = nil, serverNAShared()
		return
	}
	sp := ProcessFigures(c, bytes, busy)
	f.Server = &sp
}

// addServer sets sum's server figures to f's and o's together, each over
// its own base (ServerBase). A span whose server is not measured at all
// (Server nil, no ServerNA: an external target) leaves the sum's unknown.
func (sum *Figures) addServer(f, o Figures) {
	sum.Server, sum.ServerNA, sum.ServerUnattributed, sum.ServerBytes, sum.ServerSeconds = nil, nil, 0, 0, 0
	if f.Server == nil && f.ServerNA == nil || o.Server == nil && o.ServerNA == nil {
		return
	}
	var c Counters
	for _, x := range []Figures{f, o} {
		if x.Server != nil {
			c = c.Add(x.Server.Counters())
		}
	}
	fb, fs := f.ServerBase()
	ob, os := o.ServerBase()
	sum.SetServerSpan(c, fb+ob, fs+os, fs+os, f.ServerUnattributed+o.ServerUnattributed)
}
