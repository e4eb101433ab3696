package engine

import (
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// Server is a server child started on its own, outside a pair: one of an
// exec sweep's, which a real client loads instead of our load process.
type Server struct{ c *child }

// StartServer starts a server child for side name with spec and waits for
// its ready message, whose URI is where clients connect.
func StartServer(opts Options, name string, spec wire.ServerSpec) (*Server, wire.Msg, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, wire.Msg{}, err
	}
	timeout := opts.StartTimeout
	if spec.Command() != "" {
		timeout = max(timeout, realServerStart)
	}
	c, ready, err := spawn(opts.Exe, model.RoleServer, name, spec, timeout)
	if err != nil {
		return nil, wire.Msg{}, err
	}
	c.realPID = ready.RealPID
	return &Server{c}, ready, nil
}

// Poll asks the server for its cumulative counters and payload.
func (s *Server) Poll(timeout time.Duration) (wire.Msg, error) {
	return s.c.call(wire.Cmd{Op: "poll"}, timeout)
}

// Pid is the server's process id (to hold it to cores).
func (s *Server) Pid() int { return s.c.pid() }

// RealPid is the real server the child runs (a server command), 0 for
// ours: held with it.
func (s *Server) RealPid() int { return s.c.realPID }

// LastStderr is the last line the server wrote on stderr.
func (s *Server) LastStderr() string { return s.c.lastStderr() }

// Stop asks the server to end, then kills it if it does not within grace.
func (s *Server) Stop(grace time.Duration) { s.c.stop(grace) }
