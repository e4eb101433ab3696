package meter

import "nbdscope/model"

// One --target process serving both sides is counted from outside, as a
// whole, by each side's server child: its calls over a span are of
// whichever loads ran in it. The engine reads both sides at once and
// tells each side's meter whether the other's load ran (OtherRan); a
// switch of turns is read too (Cut), when neither runs. A side's sample
// is then the spans between its reads: where the other's load did not
// run in a span, the process's counts are this side's (or, this side's
// load idle too, nobody's: 0); where it did, they are not attributed to
// either side, and one such span makes the whole sample's server figures
// n/a, as its payload is the whole sample's (engine/shared.go).

// sharing is how a side's server counts over a span are attributed.
type sharing int

const (
	notShared       sharing = iota // the side's server is its own: all of its counts are the side's
	sharedOtherIdle                // shared; the other side's load did not run in the span
	sharedOtherRan                 // shared; the other's load ran (or may have) in it too
)

// spans are the server counts of a sample being gathered: the counters
// and the load's active clock at the last sample or cut, and what was
// attributed since.
type spans struct {
	otherRan bool // the other side's load ran since the last sample or cut
	cut      model.Counters
	cutAct   int64
	pend     model.Counters
	unknown  bool // some of pend's spans were not attributable
}

// begin starts the spans at a load's first reading.
func (s *spans) begin(r Reading) {
	*s = spans{cut: r.Server.Counters, cutAct: r.Load.ActiveNs}
}

// OtherRan notes that the other side's load ran (or may have) since this
// side's last sample or cut; it holds until the next.
func (m *Meter) OtherRan() { m.spans.otherRan = true }

// Cut ends the side's current span at a reading between turns, when
// neither load runs: the server's counts up to it are decided now.
func (m *Meter) Cut(r Reading) {
	if m.started {
		m.spans.add(r, true)
	}
}

// sharing is how the span being measured attributes the side's server
// counts; it starts the next span's note afresh.
func (s *spans) sharing(shared bool) sharing {
	ran := s.otherRan
	s.otherRan = false
	switch {
	case !shared:
		return notShared
	case ran:
		return sharedOtherRan
	}
	return sharedOtherIdle
}

// attribute keeps of the server's counts what is the side's: all of them
// (its own server, or its load alone ran), none where its load did not
// run (the other side's, or nobody's), and none, unknown, where both
// loads ran.
func (d *Delta) attribute(share sharing) {
	switch {
	case share == notShared:
	case d.Active == 0:
		d.Server = model.Counters{}
	case share == sharedOtherRan:
		d.Server, d.SrvUnknown = model.Counters{}, true
	}
}

// add attributes the server's counts since the last sample or cut, up to
// the reading r, and adds them to the sample's.
func (s *spans) add(r Reading, shared bool) {
	span := Delta{Active: float64(r.Load.ActiveNs-s.cutAct) / 1e9, Server: r.Server.Counters.Sub(s.cut)}
	span.attribute(s.sharing(shared))
	s.cut, s.cutAct = r.Server.Counters, r.Load.ActiveNs
	s.pend = s.pend.Add(span.Server)
	s.unknown = s.unknown || span.SrvUnknown
}

// take ends the sample at the reading r: the server's counts attributed
// to the side since the last sample, over its spans, or unknown where a
// span's were not attributable (then zero).
func (s *spans) take(r Reading, shared bool) (model.Counters, bool) {
	s.add(r, shared)
	got, unknown := s.pend, s.unknown
	s.pend, s.unknown = model.Counters{}, false
	if unknown {
		got = model.Counters{}
	}
	return got, unknown
}
