package model

import "nbdscope/units"

// The words for who waited on whom, from the send-buffer fill: a full
// buffer means the sender waited for its reader, an empty one that the
// reader waited for the sender. Together with cores busy (Pace) they say
// whether a bigger buffer can help. Shared by run's and sweep's pace
// lines and the explorer's pace row.

// fillMost is the share (percent) of samples from which a buffer is said
// to have been full, or empty, most of the time.
const fillMost = 50

// fillLong is the share (percent) from which a buffer's full or empty
// time counts as a wait worth naming: "neither waited long" is said only
// when it was full and empty less than this each.
const fillLong = 20

// fillMinSamples is the fewest samples a verdict is drawn from, a fifth
// of a second at 100 Hz: a small sweep measurement lasts a few
// milliseconds, and two or three readings say nothing of who waited.
const fillMinSamples = 20

// TooFew tells a measured fill drawn from too few samples for a verdict.
func (f Fill) TooFew() bool { return f.Known() && f.Samples < fillMinSamples }

// Wait is who waited on whom, by the send-buffer fill (WaitOf, one rule).
type Wait string

// The waits. Their names are what JSON and tests see.
const (
	FillWaitReader Wait = "full"    // full most of the time: the sender waited on its reader
	FillWaitSender Wait = "empty"   // empty most of the time: the reader waited on the sender
	FillTurns      Wait = "turns"   // empty most of the time and often full: the buffer too small to bridge a wake-up
	FillBoth       Wait = "both"    // neither most of the time, but one of them long: each waited at times
	FillNeither    Wait = "neither" // full and empty both short: neither waited long
	FillUnknown    Wait = ""        // not measured, or from too few samples
)

// FillVerdictOf is the rule of who waited: full at least fillMost% of
// the time, the sender waited; empty that long, the reader did (in
// turns with the sender when it was also full fillLong% or more);
// neither that long, each waited at times when either was fillLong% or
// more, and neither waited long when both were under it.
func FillVerdictOf(fl Fill) Wait {
	switch {
	case !fl.Known() || fl.TooFew():
		return FillUnknown
	case fl.FullPct >= fillMost:
		return FillWaitReader
	case fl.EmptyPct >= fillMost && fl.FullPct >= fillLong:
		// Empty most of the time, yet full often: it fills to the top and
		// drains between the sender's wake-ups.
		return FillTurns
	case fl.EmptyPct >= fillMost:
		return FillWaitSender
	case fl.FullPct >= fillLong || fl.EmptyPct >= fillLong:
		return FillBoth
	}
	return FillNeither
}

// FillText is the words for a span's fill whose data went flow's way, as
// the verdict with pace p words them; "" when the fill was not measured.
func FillText(fl Fill, flow Flow, p Pace) string {
	p.Fill, p.Flow = fl, flow
	return VerdictOfPace(p).WaitText()
}

// FillShort is the explorer's few words for a fill ("buf full 97%:
// server waits", "buf empty 81%: client waits"), with no pace known.
func FillShort(fl Fill, flow Flow) string {
	return VerdictOfPace(Pace{Fill: fl, Flow: flow}).WaitShort()
}

// sizeText is a byte figure for people: a mean is rarely a whole number
// of KiB, and FormatSize (exact, for sizes a user types) printed it as
// plain bytes beside the limit's "208k" ("mean 100132 of 208k").
func sizeText(b Figure) string { return units.FormatBytes(float64(b)) }
