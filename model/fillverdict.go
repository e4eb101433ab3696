package model

// The rule of who waited on whom, from the send-buffer fill: a full
// buffer means the sender waited for its reader, an empty one that the
// reader waited for the sender. Together with cores busy (Pace) they say
// whether a bigger buffer can help. Package phrase words the verdict for
// run's and sweep's pace lines and the explorer's pace row.

// FillMost is the share (percent) of samples from which a buffer is said
// to have been full, or empty, most of the time.
const FillMost = 50

// FillLong is the share (percent) from which a buffer's full or empty
// time counts as a wait worth naming: "neither waited long" is said only
// when it was full and empty less than this each.
const FillLong = 20

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

// FillVerdictOf is the rule of who waited: full at least FillMost% of
// the time, the sender waited; empty that long, the reader did (in
// turns with the sender when it was also full FillLong% or more);
// neither that long, each waited at times when either was FillLong% or
// more, and neither waited long when both were under it.
func FillVerdictOf(fl Fill) Wait {
	switch {
	case !fl.Known() || fl.TooFew():
		return FillUnknown
	case fl.FullPct >= FillMost:
		return FillWaitReader
	case fl.EmptyPct >= FillMost && fl.FullPct >= FillLong:
		// Empty most of the time, yet full often: it fills to the top and
		// drains between the sender's wake-ups.
		return FillTurns
	case fl.EmptyPct >= FillMost:
		return FillWaitSender
	case fl.FullPct >= FillLong || fl.EmptyPct >= FillLong:
		return FillBoth
	}
	return FillNeither
}
