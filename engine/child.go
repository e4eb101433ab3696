package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"nbdscope/clientrun"
	"nbdscope/engine/childproc"
	"nbdscope/engine/wire"
	"nbdscope/model"
)

// child is one spawned process in an internal role: the plumbing of
// childproc with the engine's messages (childCmd down, childMsg up).
type child struct {
	proc   *childproc.Proc
	role   string
	side   string
	exited <-chan struct{} // proc.Exited()
	// reported is closed once the side's watch has handled the exit:
	// reported it as a crash, or found it expected.
	reported chan struct{}
	// realPID is the real server a server child runs (a side's server
	// command), 0 for ours: placed with the child.
	realPID int
	// attached: realPID is a local --target's server, measured but not
	// ours to place or stop (target.go); realCmd is its command line.
	attached bool
	realCmd  string
	// bufsNA (attached): why the server's buffers are left as they are
	// (nil: they follow the side's settings).
	bufsNA *model.Reason
}

// ChildStopGrace is how long a child gets to end after it is asked to,
// before it is killed: longer than the grace it gives a real server's or
// client's process group (clientrun.GroupGrace), so that it is never
// killed in the middle of killing the groups it owns.
const ChildStopGrace = clientrun.GroupGrace + 2*time.Second

// realServerStart bounds a real server child's start: the child waits up
// to 10 s for the server to listen (engine/child's listenTimeout).
const realServerStart = 15 * time.Second

// ErrChildGone is a call's error once the child has exited.
var ErrChildGone = childproc.ErrGone

// spawn starts exe in an internal role for side and waits for its ready
// message.
func spawn(exe, role, side string, spec any, timeout time.Duration) (*child, wire.Msg, error) {
	p, raw, err := childproc.Start(exe, role, side+" "+role, spec, timeout)
	if err != nil {
		return nil, wire.Msg{}, err
	}
	c := &child{proc: p, role: role, side: side, exited: p.Exited(), reported: make(chan struct{})}
	var m wire.Msg
	if err := json.Unmarshal(raw, &m); err != nil {
		c.stop(ChildStopGrace)
		return nil, wire.Msg{}, fmt.Errorf("%s %s: bad ready message: %w", side, role, err)
	}
	return c, m, nil
}

// call sends a command and waits for its reply. A failed command returns
// its reply with the error.
func (c *child) call(cmd wire.Cmd, timeout time.Duration) (wire.Msg, error) {
	raw, err := c.proc.Call(cmd.Op, func(seq uint64) any { cmd.Seq = seq; return cmd }, timeout)
	var m wire.Msg
	if raw != nil {
		if uerr := json.Unmarshal(raw, &m); uerr != nil && err == nil {
			return wire.Msg{}, fmt.Errorf("bad reply to %q: %w", cmd.Op, uerr)
		}
	}
	return m, err
}

// stop asks the child to end, then kills it if it does not within grace.
func (c *child) stop(grace time.Duration) { c.proc.Stop(grace) }

func (c *child) status() string        { return c.proc.Status() }
func (c *child) reason() string        { return c.proc.Reason() }
func (c *child) stderrLines() []string { return c.proc.StderrLines() }
func (c *child) lastStderr() string    { return c.proc.LastStderr() }
func (c *child) pid() int              { return c.proc.Process().Pid }
