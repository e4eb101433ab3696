package phrase

import (
	"fmt"

	"nbdscope/model"
	"nbdscope/units"
)

// The verdicts' words: what set the pace (model.PaceOf) and who waited
// on whom (model.FillVerdictOf), shared by run's and sweep's pace lines
// and the explorer's pace row. The verdicts are the model's; the words
// are here.

// PaceText is the words for a pace, shared by a sweep's line and a run's:
// the process that used all of the cores it was held to, with its cores
// busy (CPU seconds per second of load: the drain after a turn can put
// it a little over the cores it had), or that neither did; with the same
// figure under the default buffer when def is given ("0.86 at default"),
// and faultNote for the client.
func PaceText(p model.Pace, def *model.Pace, clientFaults model.Figure) string {
	text := coresText(p, def, clientFaults)
	if ft := FillText(p.Fill, p.Flow, p); ft != "" {
		return ft + "; " + text
	}
	return text
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

// faultNote adds, for a client that faults its buffers in afresh, that
// this may be its work: where a fault is dear (a VM that backs memory
// lazily: 10-16 µs here) it alone can set the pace.
func faultNote(faults model.Figure) string {
	if !model.FaultsAfresh(faults) {
		return ""
	}
	return fmt.Sprintf("; it took %s page faults per 2 MiB, faulting its buffers in afresh, and where a fault is dear (a VM) that can be most of its work",
		faults.Fixed(0))
}

// cores is "1 core", "2 cores".
func cores(n int) string { return CountOf(n, "core") }

// FillText is the words for a span's fill whose data went flow's way, with what the
// pace adds (a reader that used all of its core cannot go faster with a
// bigger buffer); "" when the fill was not measured.
func FillText(fl model.Fill, flow model.Flow, p model.Pace) string {
	snd, rcv := flow.Sender(), flow.Receiver()
	readerFull := p.Bound == rcv
	switch model.FillVerdictOf(fl) {
	case model.FillWaitReader:
		if readerFull {
			return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s, which used all of its CPU; a bigger buffer cannot speed that up",
				fl.FullPct.Fixed(0), snd, rcv)
		}
		return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s; a bigger buffer removes that", fl.FullPct.Fixed(0), snd, rcv)
	case model.FillTurns:
		return fmt.Sprintf("the send buffer was empty %s%% and full %s%% of the time (mean %s of %s): it drains between the %s's wake-ups, so the %s waits on each; a bigger buffer bridges them",
			fl.EmptyPct.Fixed(0), fl.FullPct.Fixed(0), sizeText(fl.Bytes), sizeText(model.Figure(fl.Limit)), snd, rcv)
	case model.FillWaitSender:
		return fmt.Sprintf("the buffer was empty %s%% of the time: the %s waited on the %s; its size does not matter here", fl.EmptyPct.Fixed(0), rcv, snd)
	case model.FillNeither:
		return fmt.Sprintf("the send buffer was full %s%%, empty %s%% of the time: neither waited long on the other", fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0))
	}
	return ""
}

// FillShort is the explorer's few words for a fill ("full 97%: server
// waits", "empty 81%: client waits").
func FillShort(fl model.Fill, flow model.Flow) string {
	snd, rcv := flow.Sender(), flow.Receiver()
	switch model.FillVerdictOf(fl) {
	case model.FillWaitReader:
		return fmt.Sprintf("buf full %s%%: %s waits", fl.FullPct.Fixed(0), snd)
	case model.FillTurns:
		return fmt.Sprintf("buf full/empty in turns: %s waits", rcv)
	case model.FillWaitSender:
		return fmt.Sprintf("buf empty %s%%: %s waits", fl.EmptyPct.Fixed(0), rcv)
	case model.FillNeither:
		return "buf neither full nor empty"
	}
	return ""
}

// sizeText is a byte figure for people: a mean is rarely a whole number
// of KiB, and FormatSize (exact, for sizes a user types) printed it as
// plain bytes beside the limit's "208k" ("mean 100132 of 208k").
func sizeText(b model.Figure) string { return units.FormatBytes(float64(b)) }
