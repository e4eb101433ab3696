package engine

import (
	"fmt"
	"sync"

	"nbdscope/model"
)

// One --target process serving both sides (--target for both, or
// --target-a and --target-b naming one server) is counted from outside,
// as a whole, by each side's server child: its calls over a sample are of
// whichever loads ran in it (model/serverspan.go). Both sides are read at
// once each tick, and a side's sample is decided once the other's read is
// in too: where the other's load did not run since its last read, the
// process's counts are this side's (or, this side's load idle too,
// nobody's: 0); where it did, they are not attributed to either side.

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
	var reads [2]sideRead
	var wg sync.WaitGroup
	for i, s := range p.sides {
		wg.Add(1)
		go func() { defer wg.Done(); reads[i] = p.readSide(s) }()
	}
	wg.Wait()
	p.noteOthersRan(reads)
	for i, s := range p.sides {
		wg.Add(1)
		go func() { defer wg.Done(); p.sampleSide(s, reads[i], true) }()
	}
	wg.Wait()
}

// noteOthersRan keeps, for each side whose server serves the other side
// too, whether the other's load ran in this tick's read; it holds until
// the side's next sample, which may fold several reads.
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

// sharing is how the sample being measured attributes the side's server
// counts; it starts the next sample's note afresh. s.mu is held.
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
			who+" serves both sides: its calls, CPU and wake-ups in samples in which both loads ran (at a turn boundary) cannot be split and are attributed to neither side "+
				"(those samples' server figures are n/a); each side's server figures are over its other samples, so A's and B's calls together come below the process's own (perf, strace)", "")
	})
}
