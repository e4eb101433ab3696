package syscount

// Send-buffer fill measured in the kernel (fill_linux.go), in one of two
// ways: by default a program on a timer of every CPU reads each watched
// sender socket's level at every tick (filltimer_linux.go), at a cost
// that does not grow with the bytes moved; or, asked for, programs at
// every change of a watched unix sender's level integrate it over time
// (fillevents_linux.go), exactly, at about 600 ns an skb. The thresholds
// are the user-space sampler's (probe/sockdiag's FullShare and
// EmptyShare): full at ≥ 90% of the limit, empty under 10%.
const (
	fillFullTenths  = 9 // full: bytes*10 >= limit*9
	fillEmptyTenths = 1 // empty: bytes*10 < limit*1
)

// Ways a meter finds the sockets it is asked to watch (FoundBy): the
// timer, where the kernel has iterators over unix sockets, when each is
// watched; else at each one's next send call, from which it is measured.
const (
	FoundByIterator = "iterator" // iter/unix, when watched
	FoundBySend     = "send"     // at the socket's next send call
)

// FillWindow is the fill of one group of sender sockets between two
// Takes, in the shape of the sampler's (sockdiag.Fill), but weighted by
// time rather than by the sampler's ticks: FullPct is the share of
// socket-time at ≥ 90% of the limit. With Seconds == 0 nothing was
// measured.
type FillWindow struct {
	// Sockets is how many sender sockets the group held at the Take.
	Sockets int
	// Events is how many changes of the level the exact programs
	// integrated in the window (OpenFillEvents); 0 from the timer.
	Events uint64
	// Samples is how many readings of a socket's level the timer took in
	// the window, summed over the group's sockets (OpenFillMeter); 0 from
	// the exact programs.
	Samples uint64
	// Seconds is the socket-time measured, summed over the group's
	// sockets: from the timer, its samples times the time between two
	// (each socket's from when it joined, or from its first send call
	// after it where the timer finds it there: FoundBy); from the
	// exact programs, the window's length from each one's first call.
	Seconds float64
	// FullPct, EmptyPct: shares of Seconds at ≥ 90% and under 10% of the
	// limit, in percent.
	FullPct, EmptyPct float64
	// MeanBytes is the time-weighted mean of the bytes in flight
	// (sockdiag.Fill.MeanBytes says what they are for unix and TCP).
	MeanBytes float64
	// Limit is the largest send-buffer limit (sk_sndbuf) seen.
	Limit int64
	// LastBytes is the mean bytes in flight at the last reading or change
	// before the Take.
	LastBytes float64
}

// OK says the window measured some time.
func (w FillWindow) OK() bool { return w.Seconds > 0 }
