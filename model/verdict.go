package model

// Verdict is what a span's figures say of its pace and its waits, decided
// once, each by one rule: the pace by the cores busy against the cores
// each process was held to (PaceOf: a process at 90% or more of them
// sets the pace), who waited by the send-buffer fill (FillVerdictOf). The
// run's pace lines, the sweep's, and the explorer's pace and buffer rows
// all word this one value, so that they never say two things of one
// span (package phrase words it): where the pace is a process's own work, no sentence says that
// process waited on the other (its buffer empty or full is then worded
// as the other keeping up, or as waits it has besides its work).
type Verdict struct {
	Pace
	Wait Wait
	// Contended names the process that waited on a run queue for a CPU
	// ContendedShare of the span or more (the one that waited the
	// longer): the CPUs were contended, and that, not the buffer, is the
	// verdict; "" when neither did or it was not measured.
	Contended string
}

// VerdictOf is the verdict of a span's figures.
func VerdictOf(f Figures) Verdict { return VerdictOfPace(PaceOf(f)) }

// VerdictOfPace is the verdict of a pace, whose Fill and Flow give the
// wait, and its waits for a CPU the contention.
func VerdictOfPace(p Pace) Verdict {
	return Verdict{Pace: p, Wait: FillVerdictOf(p.Fill), Contended: contendedOf(p)}
}

// contendedOf is the contention rule: the process that waited for a CPU
// ContendedShare of the span or more, the longer waiter of the two.
func contendedOf(p Pace) string {
	who, most := "", Figure(ContendedShare)
	for _, c := range []struct {
		who  string
		wait Figure
	}{{BoundClient, p.ClientWaiting}, {BoundServer, p.ServerWaiting}} {
		if c.wait.Known() && c.wait >= most {
			who, most = c.who, c.wait
		}
	}
	return who
}

// WaitingFor is the contended process's share of the span waiting for a
// CPU.
func (v Verdict) WaitingFor() Figure {
	if v.Contended == BoundServer {
		return v.ServerWaiting
	}
	return v.ClientWaiting
}

// WaitOfLead says the contended process's wait is its lead thread's
// (Process.LeadWaiting), not all its threads' (a run saved before).
func (v Verdict) WaitOfLead() bool {
	if v.Contended == BoundServer {
		return v.ServerLead
	}
	return v.ClientLead
}

// Unjudged is the verdict with no pace claimed (other processes took the
// cores, or the sides shared them at once): its wait is worded from the
// fill alone.
func (v Verdict) Unjudged() Verdict {
	v.Bound = BoundNone
	return v
}

// BoundWaiter tells whether the process the fill names as waiting is the
// one whose own work sets the pace: then it did not wait for the other,
// and the fill is worded as the other keeping up with it.
func (v Verdict) BoundWaiter() bool {
	if v.Bound == BoundNone || v.Bound == BoundCore {
		return false
	}
	switch v.Wait {
	case FillWaitReader:
		return v.Bound == v.Flow.Sender()
	case FillWaitSender, FillTurns:
		return v.Bound == v.Flow.Receiver()
	}
	return false
}

// BoundOther tells whether the process the waiter waited on used all of
// its CPU: then waiting on it is its work's pace, and no bigger buffer
// removes it.
func (v Verdict) BoundOther() bool {
	switch v.Wait {
	case FillWaitReader:
		return v.Bound == v.Flow.Receiver()
	case FillWaitSender:
		return v.Bound == v.Flow.Sender()
	}
	return false
}
