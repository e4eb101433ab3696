package engine

import (
	"errors"
	"fmt"
	"os"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/probe/realproc"
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
		why := wire.ReasonOf(err)
		s.p.raise(model.Warn(s.id, model.TargetNotMeasured{Reason: *why}))
		s.noteTargetWhy(why)
		s.warnBuffersUnset(sc, why)
		return nil
	}
	if h.PID == os.Getpid() {
		s.noteTargetWhy(&model.Reason{Kind: model.ReasonServedByUs})
		return nil // served in this process (a test's export): not a server side to measure
	}
	spec := wire.NewServerSpec(sc, "")
	spec.AttachPID, spec.Target = h.PID, sc.Target
	c, ready, err := spawn(s.p.opts.Exe, model.RoleServer, sc.Name, spec, s.p.opts.StartTimeout)
	if err != nil {
		why := wire.ReasonOf(err)
		s.p.raise(model.Warn(s.id, model.TargetNotMeasured{PID: h.PID, Command: h.Command, Reason: *why}))
		s.noteTargetWhy(why)
		s.warnBuffersUnset(sc, why)
		return nil
	}
	c.realPID, c.attached, c.realCmd, c.bufsNA = h.PID, true, h.Command, ready.BufsNA
	s.p.raise(model.Warn(s.id, model.TargetMeasured{PID: h.PID, Command: h.Command}))
	if c.bufsNA != nil {
		s.p.raise(model.Warn(s.id, model.TargetBuffersKept{PID: h.PID, Reason: *c.bufsNA}))
		s.noteTargetWhy(c.bufsNA)
	}
	return c
}

// warnBuffersUnset says which of the server buffers asked for a --target
// side are not applied, its server not being measured (why): they stay
// the server's own, where the summary only says "external".
func (s *side) warnBuffersUnset(sc model.SideConfig, why *model.Reason) {
	for _, b := range []struct {
		name string
		buf  model.Buf
	}{{"sndbuf", sc.SndBuf}, {"server-rcvbuf", sc.ServerRcvBuf}} {
		if b.buf.Kind != model.BufDefault {
			s.p.raise(model.Warn(s.id, model.TargetBufferUnset{Setting: b.name, Buf: b.buf.String(), Reason: *why}))
		}
	}
}

// namePeer tells a server child attached to a local --target's server
// which process is our load, so that only its connections are followed
// and tuned (the server's other clients are not ours to change).
func (s *side) namePeer(srv, ld *child) {
	if srv == nil || !srv.attached {
		return
	}
	if _, err := srv.call(wire.Cmd{Op: wire.OpPeer, Int: ld.pid()}, 10*time.Second); err != nil && !errors.Is(err, ErrChildGone) {
		s.p.raise(model.Warn(s.id, model.TargetPeerUnknown{PID: srv.realPID, Err: err.Error()}))
	}
}

// noteTargetWhy keeps why the target's server is not measured, for the
// refusal of a change of its buffers.
func (s *side) noteTargetWhy(why *model.Reason) {
	s.mu.Lock()
	s.targetWhy = why
	s.mu.Unlock()
}

// targetServer is the local process serving the side's --target that its
// server child measures, nil for none. s.mu is held.
func (s *side) targetServer() *model.RealProcess {
	if s.server == nil || !s.server.attached {
		return nil
	}
	rp := &model.RealProcess{PID: s.server.realPID, Command: s.server.realCmd}
	rp.BuffersNA = s.server.bufsNA
	return rp
}

// sharesTargetServer tells whether s's --target server is measured and is
// the other side's too: one process serving both sides, as --target for
// both gives, whose counts are of whichever side's load ran. It takes each
// side's lock in turn; the caller holds neither.
func (p *Pair) sharesTargetServer(s *side) bool {
	pid := func(x *side) int {
		x.mu.Lock()
		defer x.mu.Unlock()
		if ts := x.targetServer(); ts != nil {
			return ts.PID
		}
		return 0
	}
	mine := pid(s)
	if mine <= 0 {
		return false
	}
	for _, x := range p.sides {
		if x != nil && x != s && pid(x) == mine {
			return true
		}
	}
	return false
}

// tunedTarget tells whether the side's --target server is measured and
// its buffers follow the side's settings. s.mu is held.
func (s *side) tunedTarget() bool {
	ts := s.targetServer()
	return ts != nil && ts.BuffersNA == nil
}

// stampOf is the settings stamp of sc on this side: a local --target's
// server that is measured has its buffers set by us, so the stamp carries
// them where an external server's says "external". s.mu is held.
func (s *side) stampOf(sc model.SideConfig) model.Stamp {
	st := model.StampOf(sc)
	if s.tunedTarget() {
		local := sc
		local.Target = ""
		ours := model.StampOf(local)
		st.SndBuf, st.ServerRcvBuf = ours.SndBuf, ours.ServerRcvBuf
	}
	return st
}

// targetRefusal is why a change of a target side's server setting st is
// refused: not ours to set, or (a buffer) not measured, and why. nil: a
// buffer of a measured local server, changed as a real server's are.
func (s *side) targetRefusal(st *model.Setting, sc model.SideConfig) error {
	s.mu.Lock()
	attached, why := s.tunedTarget(), s.targetWhy
	s.mu.Unlock()
	if st.Type == model.TypeBuf && st.Where == model.AtServer {
		if attached {
			return nil
		}
		if why == nil {
			why = &model.Reason{Kind: model.ReasonNotLocal, What: sc.Target}
		}
		return fmt.Errorf("%s: side %s targets %s, whose buffers cannot be changed: %s", st.Name, s.name, sc.Target, phrase.ReasonWithFix(*why))
	}
	return fmt.Errorf("%s: side %s targets an external server (%s): not ours to set", st.Name, s.name, sc.Target)
}
