package model

import (
	"fmt"
	"strings"
)

// Update is one message from a running pair to whoever watches it (the TUI,
// the headless run). Exactly one field is set.
type Update struct {
	Sample  *Sample  // one interval of one side
	Event   *Event   // a setting took effect
	Crash   *Crash   // a child process died
	Warning *Warning // something the user should know (clamped buffer, …)
	Done    *Done    // the run ended (duration reached or Stop)
}

// The roles of a side's two processes: a Crash's Role, and the internal
// role a child runs in (ChildCommand).
const (
	RoleServer = "server"
	RoleLoad   = "load"
)

// Crash reports a child process that died. Text says it in one line.
type Crash struct {
	T      float64  `json:"t"`
	Side   SideID   `json:"side"`
	Role   string   `json:"role"`             // "server" or "load"
	Target string   `json:"target,omitempty"` // the NBD URI the side served or loaded
	Status string   `json:"status"`           // "exit status 2", "signal: killed"
	Reason string   `json:"reason,omitempty"` // the child's own word on why, else its last stderr line
	Stderr []string `json:"stderr"`           // its last lines
}

// Text is the crash in one line: which process, how it ended, why, and the
// target it served or loaded.
func (c Crash) Text() string {
	r := c.Reason
	if r == "" {
		r = "(no output)"
	}
	if c.Target != "" && !strings.Contains(r, c.Target) {
		r = c.Target + ": " + r
	}
	return fmt.Sprintf("side %s %s died (%s): %s", c.Side, c.Role, c.Status, r)
}

// Warning is a condition worth showing, with the fix where there is one.
type Warning struct {
	T    float64 `json:"t"`
	Side SideID  `json:"side"` // WholePair: the whole pair
	Kind string  `json:"kind"` // one of the Warn… kinds
	Text string  `json:"text"`
	Fix  string  `json:"fix,omitempty"`
}

// Done ends the update stream.
type Done struct {
	Err error
}

// The kinds of a Warning (WarnFill is fill.go's).
const (
	WarnClamp     = "clamp"     // the kernel gave a buffer less than asked
	WarnCores     = "cores"     // too few cores for the sides to run at once fairly
	WarnTurns     = "turns"     // a load could not be paused or resumed for its turn
	WarnScript    = "script"    // a scripted change failed
	WarnPlacement = "placement" // the processes could not be held where asked
	WarnConsume   = "consume"   // a consume mode's change did not take
	WarnCalls     = "calls"     // a real client's or server's socket calls cannot be counted
	WarnRequests  = "requests"  // requests failed: the figures count only those that did not
	WarnTarget    = "target"    // a local --target's server: measured, or why not
	WarnExecFlow  = "exec-flow" // a real client moved its data the other way than the side's workload says
	WarnExecIdle  = "exec-idle" // a real client moved no payload in the whole run: its figures are n/a
)
