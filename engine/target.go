package engine

import (
	"fmt"
	"os"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/realproc"
)

// A local --target is measured as a real server side is: when the target
// is a unix socket or a loopback TCP port held by a local process
// nbdscope may look at (realproc.FindServer), a server child attaches to
// that process (engine/child's realattach.go) and reports its calls, CPU,
// wake-ups and sockets. The process is not ours: it is not placed, held
// or stopped. Where it cannot be found or attached, the side runs as an
// external target does, its server figures n/a, and a warning says why.

// attachTarget starts a server child measuring the target's local server,
// or returns nil (with the warning said) when there is none to measure.
func (s *side) attachTarget(sc model.SideConfig) *child {
	h, err := realproc.FindServer(sc.Target)
	if err != nil {
		s.p.warn(s.id, model.WarnTarget, fmt.Sprintf("the target's server is not measured (its figures are n/a): %v", err), "")
		return nil
	}
	if h.PID == os.Getpid() {
		return nil // served in this process (a test's export): not a server side to measure
	}
	spec := wire.NewServerSpec(sc, "")
	spec.AttachPID, spec.Target = h.PID, sc.Target
	c, _, err := spawn(s.p.opts.Exe, model.RoleServer, sc.Name, spec, s.p.opts.StartTimeout)
	if err != nil {
		s.p.warn(s.id, model.WarnTarget, fmt.Sprintf("the target's server, PID %d (%s), is not measured: %v", h.PID, h.Command, err), "")
		return nil
	}
	c.realPID, c.attached = h.PID, true
	s.p.warn(s.id, model.WarnTarget, fmt.Sprintf("the target is served by PID %d (%s): measured as a real server", h.PID, h.Command), "")
	return c
}
