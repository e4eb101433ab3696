package engine

import "nbdscope/model"

// When a side's missing fill is worth a warning. A sample has no fill
// for one of two kinds of reason: one that holds for the whole span (no
// sampler here, the server not ours to look at, a process that refuses
// its descriptors, sock_diag refused) and one that holds for a moment
// only: the look for the side's data connections came when there were
// none, or the interval's ticks found none to read. A real client
// connects anew for each run, so looks between two runs find nothing,
// and a reconnect does the same to our load; the next look finds the
// next run's connection. Such a sample's fill is n/a, and the side's
// fill is still measured over its other samples: only a span in which
// no sample had a fill is one whose fill could not be measured.

// fillMissSamples is how many samples in which the load ran, with no
// fill and none measured before in the span, make a warning during the
// run; fewer are said at the span's end (the run's, or the load's
// restart). A client that takes far longer to start than to move its
// data holds a connection at few looks.
const fillMissSamples = 20

// fillNotes is what a side's looks for its data connections and its
// samples said over its load's span (from its start to its end or
// restart). s.mu is held for all of its methods.
type fillNotes struct {
	load     *child        // the load whose span this is
	why      *model.Reason // why the last look found no senders (nil: it found some)
	moment   bool          // why holds for that moment only: no connection existed then
	measured bool          // a sample of the span had a fill
	missed   int           // samples of the span in which the load ran without a fill
	missWhy  *model.Reason // why the last of them had none
	warned   bool          // the side's warning was said (once a run)
}

// look notes a look for ld's data connections (why: why none were found,
// nil when some were; moment: only that none existed then). A look at
// another load than the last starts a new span; it returns the reason
// due at the end of the one before (spanEnd), nil for none.
func (n *fillNotes) look(ld *child, why *model.Reason, moment bool) (endWarn *model.Reason) {
	if ld != n.load {
		if n.load != nil {
			endWarn = n.spanEnd()
		}
		*n = fillNotes{load: ld, warned: n.warned}
	}
	n.why, n.moment = why, moment
	return endWarn
}

// sample notes a sample of the span: whether it had a fill, whether the
// load ran in it (active), and why it had none (the last look's reason,
// or the sampler's: refused). It returns the reason to warn of now, nil
// for none: at once for a reason of the whole span, after
// fillMissSamples for a moment's, and never once the span's fill was
// measured.
func (n *fillNotes) sample(hasFill, active bool, refused *model.Reason) *model.Reason {
	if hasFill {
		n.measured = true
		return nil
	}
	if !active || n.warned {
		return nil
	}
	why, lasting := n.why, n.why != nil && !n.moment
	if why == nil && refused != nil {
		why, lasting = refused, true
	}
	if why == nil {
		why = &model.Reason{Kind: model.ReasonNoneRead}
	}
	if lasting {
		n.warned = true
		return why
	}
	if n.measured {
		return nil
	}
	n.missed++
	n.missWhy = why
	if n.missed < fillMissSamples {
		return nil
	}
	n.warned = true
	return n.missedReason()
}

// spanEnd is the reason due when a span ends: some of its samples in
// which the load ran had no fill, none had one, and nothing said so yet.
func (n *fillNotes) spanEnd() *model.Reason {
	if n.warned || n.measured || n.missed == 0 {
		return nil
	}
	n.warned = true
	return n.missedReason()
}

// missedReason is why the span's fill is n/a: the last reason, over how
// many samples.
func (n *fillNotes) missedReason() *model.Reason {
	r := *n.missWhy
	r.Samples = n.missed
	return &r
}
