package phrase

import (
	"fmt"

	"nbdscope/model"
	"nbdscope/units"
)

// The words of the pace and wait verdict (model.Verdict): who set the
// pace and who waited on whom. The model decides each by one rule; these
// word the one value, so the run's and the sweep's pace lines and the
// explorer's pace and buffer rows never say two things of one span.

// contendedWho is who waited for a core and how long: "the server's
// busiest thread waited 31% of the time for a core" (the thread doing
// its work: model.Process.LeadWaiting); in a run saved before that was
// kept, all its threads', "the server waited 31% of the time for a
// core", or, where together they waited longer than the span (a share
// over 1), "the server's threads waited for a core 1.24 times the span".
func contendedWho(v model.Verdict) string {
	w := v.WaitingFor()
	switch {
	case v.WaitOfLead():
		return fmt.Sprintf("the %s's busiest thread waited %s%% of the time for a core", v.Contended, (100 * w).Fixed(0))
	case w >= 1:
		return fmt.Sprintf("the %s's threads waited for a core %s times the span", v.Contended, w.Fixed(2))
	}
	return fmt.Sprintf("the %s waited %s%% of the time for a core", v.Contended, (100 * w).Fixed(0))
}

// contendedText is the sentence of contention: who waited for a core,
// and the fill as what it measured then (the buffer's waits were waits
// for a core, not for the other process).
func contendedText(v model.Verdict) string {
	text := "the CPUs were contended: " + contendedWho(v)
	if fl := v.Fill; v.Wait != model.FillUnknown {
		text += fmt.Sprintf(" (the send buffer full %s%%, empty %s%% of the time: waits for a core, not for the other process)", fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0))
	}
	return text
}

// WaitText is the sentence for who waited on whom; "" when the fill was
// not measured (or from too few samples).
func WaitText(v model.Verdict) string {
	if v.Contended != "" {
		return contendedText(v)
	}
	fl, snd, rcv := v.Fill, v.Flow.Sender(), v.Flow.Receiver()
	full, empty := fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0)
	switch v.Wait {
	case model.FillWaitReader:
		switch {
		case v.BoundWaiter():
			return fmt.Sprintf("the send buffer was full %s%% of the time, and the %s still used all of its CPU: a bigger buffer removes its stops, and then its own work sets the pace", full, snd)
		case v.BoundOther():
			return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s, which used all of its CPU; a bigger buffer cannot speed that up", full, snd, rcv)
		}
		return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s; a bigger buffer removes that", full, snd, rcv)
	case model.FillTurns:
		mean := fmt.Sprintf("(mean %s of %s)", sizeText(fl.Bytes), sizeText(model.Figure(fl.Limit)))
		if v.BoundWaiter() {
			return fmt.Sprintf("the send buffer was empty %s%% and full %s%% of the time %s: it drains between the %s's wake-ups, and the %s's own work sets the pace", empty, full, mean, snd, rcv)
		}
		return fmt.Sprintf("the send buffer was empty %s%% and full %s%% of the time %s: it drains between the %s's wake-ups, so the %s waits on each; a bigger buffer bridges them", empty, full, mean, snd, rcv)
	case model.FillWaitSender:
		switch {
		case v.BoundWaiter():
			return fmt.Sprintf("the buffer was empty %s%% of the time: the %s kept up with the %s, whose own work sets the pace; its size does not matter here", empty, snd, rcv)
		case v.BoundOther():
			return fmt.Sprintf("the buffer was empty %s%% of the time: the %s waited on the %s, which used all of its CPU; its size does not matter here", empty, rcv, snd)
		}
		return fmt.Sprintf("the buffer was empty %s%% of the time: the %s waited on the %s; its size does not matter here", empty, rcv, snd)
	case model.FillBoth:
		return fmt.Sprintf("the send buffer was full %s%%, empty %s%% of the time: each side waited on the other at times, neither most of the time", full, empty)
	case model.FillNeither:
		return fmt.Sprintf("the send buffer was full %s%%, empty %s%% of the time: neither waited long on the other", full, empty)
	}
	return ""
}

// WaitShort is the explorer's few words for the wait ("buf full 97%:
// server waits", "buf empty 81%: server keeps up"); "" when not measured.
func WaitShort(v model.Verdict) string {
	if v.Contended != "" {
		if w := v.WaitingFor(); w >= 1 {
			return fmt.Sprintf("CPUs contended: %s queued %sx", v.Contended, w.Fixed(2))
		}
		return fmt.Sprintf("CPUs contended: %s queued %s%%", v.Contended, (100 * v.WaitingFor()).Fixed(0))
	}
	fl, snd, rcv := v.Fill, v.Flow.Sender(), v.Flow.Receiver()
	switch v.Wait {
	case model.FillWaitReader:
		if v.BoundWaiter() {
			return fmt.Sprintf("buf full %s%%: %s busy too", fl.FullPct.Fixed(0), snd)
		}
		return fmt.Sprintf("buf full %s%%: %s waits", fl.FullPct.Fixed(0), snd)
	case model.FillTurns:
		if v.BoundWaiter() {
			return fmt.Sprintf("buf full/empty in turns: %s busy", rcv)
		}
		return fmt.Sprintf("buf full/empty in turns: %s waits", rcv)
	case model.FillWaitSender:
		if v.BoundWaiter() {
			return fmt.Sprintf("buf empty %s%%: %s keeps up", fl.EmptyPct.Fixed(0), snd)
		}
		return fmt.Sprintf("buf empty %s%%: %s waits", fl.EmptyPct.Fixed(0), rcv)
	case model.FillBoth:
		return fmt.Sprintf("full %s%% empty %s%%: both wait", fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0)) // fits the pace row at 160 columns
	case model.FillNeither:
		return "buf neither full nor empty"
	}
	return ""
}

// PaceShort is the explorer's few words for the pace ("client (core
// full)"); compete: the sides ran at once on shared cores, so no pace is
// claimed. "" when the client's CPU is not known.
func PaceShort(v model.Verdict, compete bool) string {
	switch {
	case !v.Client.Known():
		return ""
	case compete:
		return "sides share cores"
	case v.ClientCores == 0:
		return "not held to cores"
	case v.Bound == model.BoundClient:
		return "client (core full)"
	case v.Bound == model.BoundServer:
		return "server (core full)"
	case v.Bound == model.BoundCore:
		return "shared core full"
	}
	return "waiting (none full)"
}

// VerdictText is the verdict's sentence, as run's and sweep's pace lines
// print it: the wait, then the pace, with the same figure under the
// default buffer when def is given and the client's faults' note.
func VerdictText(v model.Verdict, def *model.Pace, clientFaults model.Figure) string {
	text := coresText(v.Pace, def, clientFaults)
	if wt := WaitText(v); wt != "" {
		return wt + "; " + text
	}
	return text
}

// PaceText is the words for a pace, shared by a sweep's line and a run's:
// the process that used all of the cores it was held to, with its cores
// busy (CPU seconds per second of load: the drain after a turn can put
// it a little over the cores it had), or that neither did; with the same
// figure under the default buffer when def is given ("0.86 at default"),
// and faultNote for the client.
func PaceText(p model.Pace, def *model.Pace, clientFaults model.Figure) string {
	return VerdictText(model.VerdictOfPace(p), def, clientFaults)
}

// coresText is PaceText's words for the cores busy.
func coresText(p model.Pace, def *model.Pace, clientFaults model.Figure) string {
	atDefault := func(pick func(model.Pace) model.Figure) string {
		if def == nil || !pick(*def).Known() {
			return ""
		}
		return pick(*def).Fixed(2) + " at default"
	}
	// full is "(0.98 cores busy; 0.86 at default)", part "0.88 (0.77 at
	// default)": the figure of a process that filled its core, and of one
	// that did not.
	full := func(v model.Figure, pick func(model.Pace) model.Figure) string {
		if d := atDefault(pick); d != "" {
			return "(" + v.Fixed(2) + " cores busy; " + d + ")"
		}
		return "(" + v.Fixed(2) + " cores busy)"
	}
	part := func(v model.Figure, pick func(model.Pace) model.Figure) string {
		if d := atDefault(pick); d != "" {
			return v.Fixed(2) + " (" + d + ")"
		}
		return v.Fixed(2)
	}
	client := func(q model.Pace) model.Figure { return q.Client }
	server := func(q model.Pace) model.Figure { return q.Server }
	both := func(q model.Pace) model.Figure { return q.Client + q.Server }
	const notWaiting = ": its own work, not waiting, sets the pace here"
	switch p.Bound {
	case model.BoundClient:
		return fmt.Sprintf("the client used all of its %s %s%s%s", cores(p.ClientCores), full(p.Client, client), notWaiting, faultNote(clientFaults))
	case model.BoundServer:
		return fmt.Sprintf("the server used all of its %s %s%s", cores(p.ServerCores), full(p.Server, server), notWaiting)
	case model.BoundCore:
		return fmt.Sprintf("client and server together used all of the %s they share %s: their work, not waiting, sets the pace here",
			cores(p.ClientCores), full(p.Client+p.Server, both))
	}
	busy := fmt.Sprintf("client %s, server %s cores busy", part(p.Client, client), part(p.Server, server))
	if p.ClientCores == 0 {
		return busy + " (not held to cores, so no bound is claimed)"
	}
	return busy + ": neither used all of its CPU; the rest of the time they waited on each other"
}

// faultsFresh is the client's page faults per 2 MiB from which it is said
// to fault its buffers in afresh: an eighth of the 512 pages a 2 MiB
// payload fills. A client that reuses its buffers takes a handful.
const faultsFresh = 64

// faultNote adds, for a client that faults its buffers in afresh, that
// this may be its work: where a fault is dear (a VM that backs memory
// lazily: 10-16 µs here) it alone can set the pace.
func faultNote(faults model.Figure) string {
	if !faults.Known() || faults < faultsFresh {
		return ""
	}
	return fmt.Sprintf("; it took %s page faults per 2 MiB, faulting its buffers in afresh, and where a fault is dear (a VM) that can be most of its work",
		faults.Fixed(0))
}

// cores is "1 core", "2 cores".
func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return fmt.Sprintf("%d cores", n)
}

// FillText is the words for a span's fill whose data went flow's way, as
// the verdict with pace p words them; "" when the fill was not measured.
func FillText(fl model.Fill, flow model.Flow, p model.Pace) string {
	p.Fill, p.Flow = fl, flow
	return WaitText(model.VerdictOfPace(p))
}

// FillShort is the explorer's few words for a fill ("buf full 97%:
// server waits", "buf empty 81%: client waits"), with no pace known.
func FillShort(fl model.Fill, flow model.Flow) string {
	return WaitShort(model.VerdictOfPace(model.Pace{Fill: fl, Flow: flow}))
}

// sizeText is a byte figure for people: a mean is rarely a whole number
// of KiB, and FormatSize (exact, for sizes a user types) printed it as
// plain bytes beside the limit's "208k" ("mean 100132 of 208k").
func sizeText(b model.Figure) string { return units.FormatBytes(float64(b)) }
