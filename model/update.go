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

// Done ends the update stream.
type Done struct {
	Err error
}
