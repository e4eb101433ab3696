package phrase

import (
	"fmt"

	"nbdscope/model"
	"nbdscope/units"
)

// A change event (model.Event: a setting took effect, live or by --at, or
// an exec side's client run ended) in words: short for the charts, the
// status line and a saved run's chart markers, long for run's summary,
// its --intervals lines and runs export's markdown.

// EventShort names a change with its side, as a chart label: "B sndbuf
// 2m→64k", "A paused", "mode alternate→concurrent", "B client run
// 2.314s", "B exec → qemu-img".
func EventShort(e model.Event) string {
	c := EventChange(e)
	if e.Side == model.WholePair || e.Side == "" || e.Setting == model.SetMode {
		return c
	}
	return string(e.Side) + " " + c
}

// EventChange is EventShort without the side, for a chart that names it
// apart: "sndbuf 2m→64k".
func EventChange(e model.Event) string {
	switch e.Setting {
	case model.SetPaused:
		if e.To == "true" {
			return "paused"
		}
		return "resumed"
	case model.SetMode:
		return "mode " + e.From + "→" + e.To
	case model.ExecRunEvent:
		return "client run " + e.To
	case model.SetExec:
		return "exec → " + orDefault(Program(e.To), "our load") // the whole command is in the side's panel
	case model.SetServer:
		return "server → " + orDefault(Program(e.To), "our server")
	}
	s := e.Setting + " " + e.From + "→" + e.To
	if e.Reconnected {
		s += " (reconnected)"
	}
	return s
}

// EventLong is a change in full, without its side or time: "sndbuf:
// default → 2m (connections re-opened: a TCP buffer set once stays
// locked) (4m read back, 2 sockets reached)"; "client run finished in
// 2.314s".
func EventLong(e model.Event) string {
	if e.Setting == model.ExecRunEvent { // not a change: a real client's run that ended
		return EventRunLong(e)
	}
	return fmt.Sprintf("%s: %s → %s%s%s", e.Setting, e.From, e.To, EventReopened(e), EventReached(e))
}

// EventRunLong is a finished client run: "client run finished in 2.314s".
func EventRunLong(e model.Event) string { return "client run finished in " + e.To }

// EventReopened is " (connections re-opened: …)" for a change that
// re-opened the side's connections, "" otherwise.
func EventReopened(e model.Event) string {
	if !e.Reconnected {
		return ""
	}
	return " (connections re-opened: a TCP buffer set once stays locked)"
}

// EventReached is what a change of a real process's buffer did: " (4m
// read back, 2 sockets reached)"; "" for a change of ours.
func EventReached(e model.Event) string {
	switch {
	case e.Reached == nil:
		return ""
	case *e.Reached == 0:
		return " (no socket open yet: applied to each as it connects)"
	}
	return fmt.Sprintf(" (%s read back, %s reached)", bufSize(e.Effective), CountOf(*e.Reached, "socket"))
}

// EventReachedShort is EventReached for the status line: " · 4m read
// back, 2 sockets".
func EventReachedShort(e model.Event) string {
	switch {
	case e.Reached == nil:
		return ""
	case *e.Reached == 0:
		return " · no socket open yet: applied to each as it connects"
	}
	return fmt.Sprintf(" · %s read back, %s", bufSize(e.Effective), CountOf(*e.Reached, "socket"))
}

// bufSize is a buffer read back: "4m", "212992 B" where not whole KiB.
func bufSize(n int) string {
	if n <= 0 {
		return model.NA
	}
	if n%1024 == 0 {
		return units.FormatSize(int64(n))
	}
	return units.FormatBytes(float64(n))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
