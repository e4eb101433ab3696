package ui

import (
	"fmt"
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

// reachedNote is what a change of a real process's buffer did, for the
// message line: " · 4m read back, 2 sockets"; "" for a change of ours.
func reachedNote(ev model.Event) string {
	switch {
	case ev.Reached == nil:
		return ""
	case *ev.Reached == 0:
		return " · no socket open yet: applied to each as it connects"
	case *ev.Reached == 1:
		return " · " + effSize(ev.Effective) + " read back, 1 socket"
	}
	return fmt.Sprintf(" · %s read back, %d sockets", effSize(ev.Effective), *ev.Reached)
}

// eventLabel is how a change is named on the charts: "B sndbuf 2m→64k".
func eventLabel(ev model.Event) string {
	side := string(ev.Side)
	switch ev.Setting {
	case model.SetPaused:
		if ev.To == "true" {
			return side + " paused"
		}
		return side + " resumed"
	case "mode":
		return "mode " + ev.From + "→" + ev.To
	case model.ExecRunEvent:
		return side + " client run " + ev.To // a finished run of an exec side
	case model.SetExec:
		// The program's name: the whole command is in the side's panel.
		to := "our load"
		if f := strings.Fields(ev.To); len(f) > 0 {
			to = f[0]
		}
		return side + " exec → " + to
	case model.SetServer:
		to := "our server"
		if f := strings.Fields(ev.To); len(f) > 0 {
			to = f[0]
		}
		return side + " server → " + to
	}
	s := ev.Setting + " " + ev.From + "→" + ev.To
	if ev.Reconnected {
		s += " (reconnected)"
	}
	if ev.Side != model.WholePair {
		s = side + " " + s
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
