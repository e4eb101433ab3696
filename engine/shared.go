package engine

import (
	"fmt"
	"sync"

	"nbdscope/model"
)

// One --target process serving both sides (--target for both, or
// --target-a and --target-b naming one server) is counted from outside,
// as a whole, by each side's server child: its calls over a span are of
// whichever loads ran in it (model/serverspan.go). Both sides are read at
// once each tick, and a side's span is decided once the other's read is
// in too: where the other's load did not run since its last read, the
// process's counts are this side's (or, this side's load idle too,
// nobody's: 0); where it did, they are not attributed to either side.
//
// A switch of turns would put both loads in the sample that spans it, so
// the process is read there too (a cut, cutTurns): after the outgoing
// load's pause has answered, its requests drained, and before the
// incoming one resumes, when neither runs. A side's sample is then the
// spans between its reads, each decided as above, and its counts are
// the sum of its spans' (the outgoing side's up to the cut, the incoming
// side's after it); one span not attributable makes the whole sample's
// server figures n/a, as its payload is the whole sample's.

// sharing is how a side's server counts over a sample are attributed.
type sharing int

const (
	notShared       sharing = iota // the side's server is its own: all of its counts are the side's
	sharedOtherIdle                // shared; the other side's load did not run in the sample
	sharedOtherRan                 // shared; the other's load ran (or may have) in it too
)

// pollSides reads both sides at once, notes for each side of a shared
// server whether the other's load ran, then turns the reads into samples.
func (p *Pair) pollSides() {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	reads := p.readBoth(p.readSide)
	p.noteOthersRan(reads)
	var wg sync.WaitGroup
	for i, s := range p.sides {
		wg.Add(1)
		go func() { defer wg.Done(); p.sampleSide(s, reads[i], true) }()
	}
	wg.Wait()
}

// readBoth reads both sides at once, as near the same moment as can be.
func (p *Pair) readBoth(read func(*side) sideRead) [2]sideRead {
	var reads [2]sideRead
	var wg sync.WaitGroup
	for i, s := range p.sides {
		wg.Add(1)
		go func() { defer wg.Done(); reads[i] = read(s) }()
	}
	wg.Wait()
	return reads
}

// noteOthersRan keeps, for each side whose server serves the other side
// too, whether the other's load ran by this read; it holds until the
// side's next sample or cut, which may fold several reads.
func (p *Pair) noteOthersRan(reads [2]sideRead) {
	for i, s := range p.sides {
		if s == nil || !p.sharesTargetServer(s) {
			continue
		}
		s.mu.Lock()
		s.otherRan = s.otherRan || reads[1-i].ran
		s.mu.Unlock()
	}
}

// sharing is how the span being measured attributes the side's server
// counts; it starts the next span's note afresh. s.mu is held.
func (s *side) sharing(shared bool) sharing {
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
func (d *delta) attribute(share sharing) {
	switch {
	case share == notShared:
	case d.active == 0:
		d.server = model.Counters{}
	case share == sharedOtherRan:
		d.server, d.srvUnknown = model.Counters{}, true
	}
}

// takeServer ends the side's sample at a read of its server (srv) and
// load (its active clock): the server's counts attributed to the side
// since the last sample, over its spans, or unknown where a span's were
// not attributable (then zero). s.mu is held.
func (s *side) takeServer(srv model.Counters, active int64, shared bool) (model.Counters, bool) {
	s.addSpan(srv, active, shared)
	got, unknown := s.pendServer, s.pendUnknown
	s.pendServer, s.pendUnknown = model.Counters{}, false
	if unknown {
		got = model.Counters{}
	}
	return got, unknown
}

// addSpan attributes the server's counts since the side's last sample or
// cut, up to a read of its server (srv) and load (active), and adds them
// to the sample's. s.mu is held.
func (s *side) addSpan(srv model.Counters, active int64, shared bool) {
	span := delta{active: float64(active-s.cutActive) / 1e9, server: srv.Sub(s.cutServer)}
	span.attribute(s.sharing(shared))
	s.cutServer, s.cutActive = srv, active
	s.pendServer = s.pendServer.Add(span.server)
	s.pendUnknown = s.pendUnknown || span.srvUnknown
}

// cutTurns reads both sides between the pause of the outgoing load and
// the resume of the other (turns.cut). A load child's pause answers once
// its requests in flight are done, or after drainWait with the drain
// going on and its active clock with it, which the reads see: the span
// after the cut is then both loads' and stays unattributed. (An --exec
// side, whose pause is a SIGSTOP that leaves the server answering its
// requests in flight, has its own server: it never shares a --target.)
// A read that fails leaves the side uncut, and the other side's load
// counted as running.
func (p *Pair) cutTurns() {
	a := p.sides[0]
	if a == nil || !p.sharesTargetServer(a) {
		return
	}
	p.readMu.Lock()
	defer p.readMu.Unlock()
	reads := p.readBoth(func(s *side) sideRead { return p.readChildren(s, false) })
	p.noteOthersRan(reads)
	for i, s := range p.sides {
		if reads[i].ok {
			s.cut(reads[i])
		}
	}
}

// cut ends the side's span at a read between turns, if the read is of the
// children its last sample read.
func (s *side) cut(r sideRead) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.havePrev || s.load != r.ld || s.server != r.srv || r.srv == nil {
		return
	}
	s.addSpan(r.sm.Counters, r.lm.ActiveNs, true)
}

// warnUnattributed says once, at the first sample whose server counts
// are not attributed, why the sides' server figures leave those out.
func (p *Pair) warnUnattributed(smp *model.Sample) {
	if smp.ServerUnattributed == 0 || p.turns != nil && p.turns.Mode() == model.ModeConcurrent {
		return // concurrent mode's own warning says it (warnCores)
	}
	p.unattributedWarned.Do(func() {
		who := "the target's server"
		if ts := smp.TargetServer; ts != nil {
			who = fmt.Sprintf("the target's server, PID %d,", ts.PID)
		}
		p.warn(model.WholePair, model.WarnTarget,
			who+" serves both sides: its calls, CPU and wake-ups in a sample in which both loads ran cannot be split and are attributed to neither side "+
				"(that sample's server figures are n/a: a turn switch that could not be read between the loads, as after a pause that did not drain within 2 s, or a failed read); "+
				"each side's server figures are over its other samples, so A's and B's calls together come below the process's own (perf, strace)", "")
	})
}
