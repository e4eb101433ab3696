package engine

import (
	"fmt"
	"strings"
	"time"
)

// crashGrace is how long a load that died waits for news of its own server:
// a killed server takes its load's connections with it, and the server's
// death, not the load's lost connection, is then the cause to report.
const crashGrace = 250 * time.Millisecond

// crashOf describes child c of side sideName, which died while it should
// have run; uri is the side's target and other the side's other child.
func (p *Pair) crashOf(sideName, uri string, c, other *child) *Crash {
	if c.role == RoleLoad && other != nil {
		t := time.NewTimer(crashGrace)
		select {
		case <-other.exited:
			c = other
		case <-t.C:
		}
		t.Stop()
	}
	return &Crash{T: p.elapsed(), Side: sideName, Role: c.role, Target: uri,
		Status: c.status(), Reason: c.reason(), Stderr: c.stderrLines()}
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
