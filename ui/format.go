package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"nbdscope/engine"
	"nbdscope/units"
)

// na is how every figure that could not be measured is shown: never 0.
const na = "n/a"

// sig prints a figure with about three significant digits.
func sig(v float64) string {
	a := math.Abs(v)
	switch {
	// The bounds are where rounding carries into a fourth digit
	// (9.996 is "10.0", not "10.00").
	case a < 9.995:
		return fmt.Sprintf("%.2f", v)
	case a < 99.95:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// fig prints a figure with sig, or n/a.
func fig(f engine.Figure) string {
	if !f.Known() {
		return na
	}
	return sig(float64(f))
}

// rate prints a throughput figure in binary units (GiB/s, MiB/s) with
// about three significant digits, like every other figure: "935 MiB/s",
// "0.99 GiB/s" (not "1012.4 MiB/s", which then jumps to "1.02 GiB/s").
func rate(f engine.Figure) string {
	if !f.Known() {
		return na
	}
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return na
	}
	names := [...]string{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"}
	i := 0
	for i < len(names)-1 && math.Abs(v) >= 999.5 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B/s", v)
	}
	return sig(v) + " " + names[i]
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
func clock(sec float64) string {
	if sec < 0 || math.IsNaN(sec) {
		sec = 0
	}
	s := int(sec)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// elapsedClock prints a duration like clock.
func elapsedClock(d time.Duration) string { return clock(d.Seconds()) }

// eventLabel is how a change is named on the charts: "B sndbuf 2m→64k".
func eventLabel(ev engine.Event) string {
	switch ev.Setting {
	case engine.SetPaused:
		if ev.To == "true" {
			return ev.Side + " paused"
		}
		return ev.Side + " resumed"
	case "mode":
		return "mode " + ev.From + "→" + ev.To
	}
	s := ev.Setting + " " + ev.From + "→" + ev.To
	if ev.Reconnected {
		s += " (reconnected)"
	}
	if ev.Side != "" {
		s = ev.Side + " " + s
	}
	return s
}

// lastLine returns the last non-blank line of a process's stderr.
func lastLine(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
