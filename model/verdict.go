package model

import "fmt"

// Verdict is what a span's figures say of its pace and its waits, decided
// once, each by one rule: the pace by the cores busy against the cores
// each process was held to (PaceOf: a process at 90% or more of them
// sets the pace), who waited by the send-buffer fill (FillVerdictOf). The
// run's pace lines, the sweep's, and the explorer's pace and buffer rows
// all word this one value, so that they never say two things of one
// span: where the pace is a process's own work, no sentence says that
// process waited on the other (its buffer empty or full is then worded
// as the other keeping up, or as waits it has besides its work).
type Verdict struct {
	Pace
	Wait Wait
}

// VerdictOf is the verdict of a span's figures.
func VerdictOf(f Figures) Verdict { return VerdictOfPace(PaceOf(f)) }

// VerdictOfPace is the verdict of a pace, whose Fill and Flow give the
// wait.
func VerdictOfPace(p Pace) Verdict { return Verdict{Pace: p, Wait: FillVerdictOf(p.Fill)} }

// Unjudged is the verdict with no pace claimed (other processes took the
// cores, or the sides shared them at once): its wait is worded from the
// fill alone.
func (v Verdict) Unjudged() Verdict {
	v.Bound = BoundNone
	return v
}

// boundWaiter tells whether the process the fill names as waiting is the
// one whose own work sets the pace: then it did not wait for the other,
// and the fill is worded as the other keeping up with it.
func (v Verdict) boundWaiter() bool {
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

// boundOther tells whether the process the waiter waited on used all of
// its CPU: then waiting on it is its work's pace, and no bigger buffer
// removes it.
func (v Verdict) boundOther() bool {
	switch v.Wait {
	case FillWaitReader:
		return v.Bound == v.Flow.Receiver()
	case FillWaitSender:
		return v.Bound == v.Flow.Sender()
	}
	return false
}

// WaitText is the sentence for who waited on whom; "" when the fill was
// not measured (or from too few samples).
func (v Verdict) WaitText() string {
	fl, snd, rcv := v.Fill, v.Flow.Sender(), v.Flow.Receiver()
	full, empty := fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0)
	switch v.Wait {
	case FillWaitReader:
		switch {
		case v.boundWaiter():
			return fmt.Sprintf("the send buffer was full %s%% of the time, and the %s still used all of its CPU: a bigger buffer removes its stops, and then its own work sets the pace", full, snd)
		case v.boundOther():
			return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s, which used all of its CPU; a bigger buffer cannot speed that up", full, snd, rcv)
		}
		return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s; a bigger buffer removes that", full, snd, rcv)
	case FillTurns:
		mean := fmt.Sprintf("(mean %s of %s)", sizeText(fl.Bytes), sizeText(Figure(fl.Limit)))
		if v.boundWaiter() {
			return fmt.Sprintf("the send buffer was empty %s%% and full %s%% of the time %s: it drains between the %s's wake-ups, and the %s's own work sets the pace", empty, full, mean, snd, rcv)
		}
		return fmt.Sprintf("the send buffer was empty %s%% and full %s%% of the time %s: it drains between the %s's wake-ups, so the %s waits on each; a bigger buffer bridges them", empty, full, mean, snd, rcv)
	case FillWaitSender:
		switch {
		case v.boundWaiter():
			return fmt.Sprintf("the buffer was empty %s%% of the time: the %s kept up with the %s, whose own work sets the pace; its size does not matter here", empty, snd, rcv)
		case v.boundOther():
			return fmt.Sprintf("the buffer was empty %s%% of the time: the %s waited on the %s, which used all of its CPU; its size does not matter here", empty, rcv, snd)
		}
		return fmt.Sprintf("the buffer was empty %s%% of the time: the %s waited on the %s; its size does not matter here", empty, rcv, snd)
	case FillBoth:
		return fmt.Sprintf("the send buffer was full %s%%, empty %s%% of the time: each side waited on the other at times, neither most of the time", full, empty)
	case FillNeither:
		return fmt.Sprintf("the send buffer was full %s%%, empty %s%% of the time: neither waited long on the other", full, empty)
	}
	return ""
}

// WaitShort is the explorer's few words for the wait ("buf full 97%:
// server waits", "buf empty 81%: server keeps up"); "" when not measured.
func (v Verdict) WaitShort() string {
	fl, snd, rcv := v.Fill, v.Flow.Sender(), v.Flow.Receiver()
	switch v.Wait {
	case FillWaitReader:
		if v.boundWaiter() {
			return fmt.Sprintf("buf full %s%%: %s busy too", fl.FullPct.Fixed(0), snd)
		}
		return fmt.Sprintf("buf full %s%%: %s waits", fl.FullPct.Fixed(0), snd)
	case FillTurns:
		if v.boundWaiter() {
			return fmt.Sprintf("buf full/empty in turns: %s busy", rcv)
		}
		return fmt.Sprintf("buf full/empty in turns: %s waits", rcv)
	case FillWaitSender:
		if v.boundWaiter() {
			return fmt.Sprintf("buf empty %s%%: %s keeps up", fl.EmptyPct.Fixed(0), snd)
		}
		return fmt.Sprintf("buf empty %s%%: %s waits", fl.EmptyPct.Fixed(0), rcv)
	case FillBoth:
		return fmt.Sprintf("full %s%% empty %s%%: both wait", fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0)) // fits the pace row at 160 columns
	case FillNeither:
		return "buf neither full nor empty"
	}
	return ""
}

// PaceShort is the explorer's few words for the pace ("client (core
// full)"); compete: the sides ran at once on shared cores, so no pace is
// claimed. "" when the client's CPU is not known.
func (v Verdict) PaceShort(compete bool) string {
	switch {
	case !v.Client.Known():
		return ""
	case compete:
		return "sides share cores"
	case v.ClientCores == 0:
		return "not held to cores"
	case v.Bound == BoundClient:
		return "client (core full)"
	case v.Bound == BoundServer:
		return "server (core full)"
	case v.Bound == BoundCore:
		return "shared core full"
	}
	return "waiting (none full)"
}

// Text is the verdict's sentence, as run's and sweep's pace lines print
// it: the wait, then the pace, with the same figure under the default
// buffer when def is given and the client's faults' note.
func (v Verdict) Text(def *Pace, clientFaults Figure) string {
	text := coresText(v.Pace, def, clientFaults)
	if wt := v.WaitText(); wt != "" {
		return wt + "; " + text
	}
	return text
}
