package ui

import (
	"strings"
	"sync/atomic"
	"time"

	"nbdscope/model"
	"nbdscope/units"
)

// na is how every figure that could not be measured is shown: never 0.
const na = model.NA

// sig prints a number with about three significant digits.
func sig(v float64) string { return units.Sig(v) }

// fig prints a figure with sig, or n/a.
func fig(f model.Figure) string { return f.Sig() }

// shownRate is the unit --rate-unit chose for every rate the explorer
// shows (nil: binary units that fit, GiB/s or MiB/s). One process runs
// one explorer, so it is the program's, set by Run from Options.RateUnit;
// atomic because tests build models side by side.
var shownRate atomic.Pointer[units.RateScale]

// rate prints a throughput figure in binary units (GiB/s, MiB/s), or in
// --rate-unit's, with about three significant digits, like every other
// figure, or n/a.
func rate(f model.Figure) string {
	if u := shownRate.Load(); u != nil && f.Known() {
		return u.Format(float64(f))
	}
	return f.Rate()
}

// effSize prints an effective buffer size (from getsockopt); 0 is unknown.
func effSize(n int) string {
	if n <= 0 {
		return na
	}
	if n%1024 == 0 {
		return units.FormatSize(int64(n))
	}
	return units.FormatBytes(float64(n))
}

// clock prints seconds since the start as m:ss or h:mm:ss.
func clock(sec float64) string { return units.FormatClock(sec) }

// elapsedClock prints a duration like clock.
func elapsedClock(d time.Duration) string { return clock(d.Seconds()) }

// lastLine returns the last non-blank line of a process's stderr.
func lastLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
