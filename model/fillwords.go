package model

import (
	"fmt"

	"nbdscope/units"
)

// The words for who waited on whom, from the send-buffer fill: a full
// buffer means the sender waited for its reader, an empty one that the
// reader waited for the sender. Together with cores busy (Pace) they say
// whether a bigger buffer can help. Shared by run's and sweep's pace
// lines and the explorer's pace row.

// fillMost is the share (percent) of samples from which a buffer is said
// to have been full, or empty, most of the time.
const fillMost = 50

// fillTurnsFull is the full share (percent) from which a buffer that was
// empty most of the time is said to fill and drain in turns.
const fillTurnsFull = 20

// fillMinSamples is the fewest samples a verdict is drawn from, a fifth
// of a second at 100 Hz: a small sweep measurement lasts a few
// milliseconds, and two or three readings say nothing of who waited.
const fillMinSamples = 20

// TooFew tells a measured fill drawn from too few samples for a verdict.
func (f Fill) TooFew() bool { return f.Known() && f.Samples < fillMinSamples }

// FillVerdict names what the fill says.
const (
	FillWaitReader = "full"  // the sender waited on its reader
	FillWaitSender = "empty" // the reader waited on the sender
	FillTurns      = "turns" // full and empty in turns: the buffer too small to bridge a wake-up
	FillNeither    = "mixed" // neither most of the time
	FillUnknown    = ""      // not measured
)

// FillVerdictOf says what a span's fill says (see the constants).
func FillVerdictOf(fl Fill) string {
	switch {
	case !fl.Known() || fl.TooFew():
		return FillUnknown
	case fl.FullPct >= fillMost:
		return FillWaitReader
	case fl.EmptyPct >= fillMost && fl.FullPct >= fillTurnsFull:
		// Empty most of the time, yet full often: it fills to the top and
		// drains between the sender's wake-ups.
		return FillTurns
	case fl.EmptyPct >= fillMost:
		return FillWaitSender
	}
	return FillNeither
}

// FillText is the words for a span's fill whose data went flow's way, with what the
// pace adds (a reader that used all of its core cannot go faster with a
// bigger buffer); "" when the fill was not measured.
func FillText(fl Fill, flow Flow, p Pace) string {
	snd, rcv := flow.Sender(), flow.Receiver()
	readerFull := p.Bound == rcv
	switch FillVerdictOf(fl) {
	case FillWaitReader:
		if readerFull {
			return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s, which used all of its CPU; a bigger buffer cannot speed that up",
				fl.FullPct.Fixed(0), snd, rcv)
		}
		return fmt.Sprintf("the send buffer was full %s%% of the time: the %s waited on the %s; a bigger buffer removes that", fl.FullPct.Fixed(0), snd, rcv)
	case FillTurns:
		return fmt.Sprintf("the send buffer was empty %s%% and full %s%% of the time (mean %s of %s): it drains between the %s's wake-ups, so the %s waits on each; a bigger buffer bridges them",
			fl.EmptyPct.Fixed(0), fl.FullPct.Fixed(0), sizeText(fl.Bytes), sizeText(Figure(fl.Limit)), snd, rcv)
	case FillWaitSender:
		return fmt.Sprintf("the buffer was empty %s%% of the time: the %s waited on the %s; its size does not matter here", fl.EmptyPct.Fixed(0), rcv, snd)
	case FillNeither:
		return fmt.Sprintf("the send buffer was full %s%%, empty %s%% of the time: neither waited long on the other", fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0))
	}
	return ""
}

// FillShort is the explorer's few words for a fill ("full 97%: server
// waits", "empty 81%: client waits").
func FillShort(fl Fill, flow Flow) string {
	snd, rcv := flow.Sender(), flow.Receiver()
	switch FillVerdictOf(fl) {
	case FillWaitReader:
		return fmt.Sprintf("buf full %s%%: %s waits", fl.FullPct.Fixed(0), snd)
	case FillTurns:
		return fmt.Sprintf("buf full/empty in turns: %s waits", rcv)
	case FillWaitSender:
		return fmt.Sprintf("buf empty %s%%: %s waits", fl.EmptyPct.Fixed(0), rcv)
	case FillNeither:
		return "buf neither full nor empty"
	}
	return ""
}

// sizeText is a byte figure for people: a mean is rarely a whole number
// of KiB, and FormatSize (exact, for sizes a user types) printed it as
// plain bytes beside the limit's "208k" ("mean 100132 of 208k").
func sizeText(b Figure) string { return units.FormatBytes(float64(b)) }
