package engine

import (
	"sync"

	"nbdscope/model"
)

// The attribution of the spans is the meter's (engine/meter's spans.go);
// what is here is the reading of both sides at once, and at the switch.
//
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
		if reads[1-i].ran {
			s.mu.Lock()
			s.meter.OtherRan()
			s.mu.Unlock()
		}
	}
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
	if s.load != r.ld || s.server != r.srv || r.srv == nil {
		return
	}
	s.meter.Cut(readingOf(r.now, r.lm, r.sm))
}

// warnUnattributed says once, at the first sample whose server counts
// are not attributed, why the sides' server figures leave those out.
func (p *Pair) warnUnattributed(smp *model.Sample) {
	if smp.ServerUnattributed == 0 || p.turns != nil && p.turns.Mode() == model.ModeConcurrent {
		return // concurrent mode's own warning says it (warnCores)
	}
	p.unattributedWarned.Do(func() {
		w := model.TargetUnattributed{}
		if ts := smp.TargetServer; ts != nil {
			w.PID = ts.PID
		}
		p.raise(model.Warn(model.WholePair, w))
	})
}
