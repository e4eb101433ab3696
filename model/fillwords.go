package model

// Who waited on whom, from the send-buffer fill: a full buffer means the
// sender waited for its reader, an empty one that the reader waited for
// the sender. Together with cores busy (Pace) they say whether a bigger
// buffer can help. The words are the phrasebook's (phrase/verdict.go).

// fillMost is the share (percent) of samples from which a buffer is said
// to have been full, or empty, most of the time.
const fillMost = 50

// fillTurnsFull is the full share (percent) from which a buffer that was
// empty most of the time is said to fill and drain in turns.
const fillTurnsFull = 20

// fillMinSamples is the fewest samples a verdict is drawn from, a tenth
// of a second at 200 Hz: a small sweep measurement lasts a few
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
