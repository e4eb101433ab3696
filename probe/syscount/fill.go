package syscount

// Send-buffer fill measured in the kernel (fill_linux.go): at every
// socket call of a watched sender socket, and at every receive its unix
// peer makes, a program reads the sender's bytes charged against its send
// buffer and its limit, and integrates them over time. The thresholds are
// the user-space sampler's (probe/sockdiag's FullShare and EmptyShare):
// full at ≥ 90% of the limit, empty under 10%.
const (
	fillFullTenths  = 9 // full: bytes*10 >= limit*9
	fillEmptyTenths = 1 // empty: bytes*10 < limit*1
)

// FillWindow is the fill of one group of sender sockets between two
// Takes, in the shape of the sampler's (sockdiag.Fill), but weighted by
// time rather than by ticks: FullPct is the share of socket-time at ≥ 90%
// of the limit, not of samples. With Seconds == 0 nothing was measured.
type FillWindow struct {
	// Sockets is how many sender sockets the group held at the Take.
	Sockets int
	// Events is how many socket calls moved the level in the window.
	Events uint64
	// Seconds is the socket-time measured: the window's length summed
	// over the group's sockets, from each one's first call on.
	Seconds float64
	// FullPct, EmptyPct: shares of Seconds at ≥ 90% and under 10% of the
	// limit, in percent.
	FullPct, EmptyPct float64
	// MeanBytes is the time-weighted mean of the bytes in flight
	// (sockdiag.Fill.MeanBytes says what they are for unix and TCP).
	MeanBytes float64
	// Limit is the largest send-buffer limit (sk_sndbuf) seen.
	Limit int64
	// LastBytes is the mean bytes in flight at the Take.
	LastBytes float64
}

// OK says the window measured some time.
func (w FillWindow) OK() bool { return w.Seconds > 0 }
