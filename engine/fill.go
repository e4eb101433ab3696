package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/probe/sockdiag"
)

// The send-buffer fill of each side's data sockets, sampled from outside
// by the controller (probe/sockdiag), so that the measured processes do
// nothing for it. One sampler serves the pair, 100 times a second; each
// side is a group of it, whose senders are the bulk sender's sockets
// connected to the receiver, found again at every poll (connections come
// and go with reconnects and restarts), and whose window is taken at every
// sample, so each Sample carries the fill of its own interval.

// fillRate is the sampler's rate: 100 Hz. Its wake-ups were most of the
// controller's own CPU at 200 Hz (1.5-2% of a core for 8 connections a
// side, each read through its holder, of which 1% the wake-ups alone:
// bench/README, "Send-buffer fill sampler" and "The controller's own
// CPU"). What the rate buys is precision: a full or empty share of n
// samples is within √(p(1−p)/n) of the truth, at most 0.5/√n (one
// standard error), so a 250 ms sample's 25 readings per socket give ±10
// points at worst, a 2 s gauge's 200 ±3.5 and a 10 s side's 1000 ±1.6,
// against ±7, ±2.5 and ±1.1 at 200 Hz; a sample keeps more than the 20
// readings a verdict on who waited needs (model.Fill.TooFew) at any
// interval from 200 ms.
const fillRate = sockdiag.DefaultRate

// fillRecvEvery looks the receivers up at 20 Hz only: their queue is not
// one of the figures, and each costs a lookup.
const fillRecvEvery = 10

// FillProc is a process at one end of a side's data connections, named by
// its PID alone so that any process can be one: our server or load child,
// or a real server or client we did not start. Tree includes everything
// it started (an exec side's client command runs under the load child).
type FillProc struct {
	PID  int
	Tree bool
}

// fillMeter is the pair's sampler and the sock_diag socket used to find
// the sides' connections.
type fillMeter struct {
	smp *sockdiag.Sampler // nil when fill cannot be sampled here; err says why
	err error

	mu      sync.Mutex // conn, looks and refused: the two sides' polls look up at once
	conn    *sockdiag.Conn
	looks   lookCache
	refused map[string]*model.Reason // by side: why its senders could not be read
}

// start starts sampling until ctx ends or stop; a failure leaves the
// meter without a sampler and the reason in err.
func (m *fillMeter) start(ctx context.Context) {
	conn, err := sockdiag.Dial()
	if err != nil {
		m.err = err
		return
	}
	smp, err := sockdiag.StartSampler(ctx, sockdiag.SamplerConfig{Rate: fillRate, RecvEvery: fillRecvEvery})
	if err != nil {
		conn.Close()
		m.err = err
		return
	}
	m.smp, m.conn = smp, conn
}

// stop ends the sampling and closes the lookup socket.
func (m *fillMeter) stop() {
	if m.smp == nil {
		return
	}
	m.smp.Stop()
	m.mu.Lock()
	m.conn.Close()
	m.conn = nil // a poll still running finds nothing rather than a reused fd
	m.mu.Unlock()
}

// DataSenders lists the sockets of sender that are connected to a socket
// of receiver: the data connections between the two, seen from the
// sender's end, each with the descriptor the sender holds it by (the
// sampler reads it through that: sockdiag.Sampler.SetHeld). Every other
// socket either holds (a listener, the control pipe to the controller, a
// connection elsewhere) is left out.
func DataSenders(conn *sockdiag.Conn, sender, receiver FillProc) ([]sockdiag.FD, error) {
	return dataSenders(conn, sender, receiver, nil, "")
}

// dataSenders is DataSenders, reusing a side's last look (looks, by
// side) when it still holds: each look described both processes' sockets
// through two namespace-wide sock_diag dumps, at every poll of each side.
func dataSenders(conn *sockdiag.Conn, sender, receiver FillProc, looks *lookCache, side string) ([]sockdiag.FD, error) {
	sfds, err := procSockets(sender)
	if err != nil {
		return nil, fmt.Errorf("the sender's sockets (PID %d): %w", sender.PID, err)
	}
	rfds, err := procSockets(receiver)
	if err != nil {
		return nil, fmt.Errorf("the receiver's sockets (PID %d): %w", receiver.PID, err)
	}
	if out, ok := looks.reuse(side, sfds, rfds); ok {
		return out, nil
	}
	ss, err := conn.Describe(sfds)
	if err != nil {
		return nil, err
	}
	rs, err := conn.Describe(rfds)
	if err != nil {
		return nil, err
	}
	var out []sockdiag.FD
	for _, l := range sockdiag.Links(ss, rs) {
		out = append(out, holderOf(l.A, sender.PID))
	}
	if len(out) == 0 {
		return nil, noConnection{sender.PID, receiver.PID}
	}
	looks.keep(side, sfds, rfds, ss, out)
	return out, nil
}

// noConnection is a look that found no data connection between the two
// processes: a moment's reason (fillnotes.go), as a real client holds none
// between two runs.
type noConnection struct{ sender, receiver int }

func (e noConnection) Error() string {
	return fmt.Sprintf("no connection between PID %d and PID %d found", e.sender, e.receiver)
}

// FillReason is why a look found no senders (err), nil when it found
// some: a moment's (noConnection: moment), or the instrument's own.
func FillReason(err error) (why *model.Reason, moment bool) {
	var nc noConnection
	switch {
	case err == nil:
		return nil, false
	case errors.As(err, &nc):
		return &model.Reason{Kind: model.ReasonNoConnection, PIDs: []int{nc.sender, nc.receiver}}, true
	}
	return wire.ReasonOf(err), false
}

// holderOf is the descriptor by which the sender holds s: the sender's
// own if it is among the holders (a forked child holds its parent's
// sockets too), else the first, a process of its tree.
func holderOf(s sockdiag.Socket, sender int) sockdiag.FD {
	for _, h := range s.Holders {
		if h.PID == sender {
			return h
		}
	}
	if len(s.Holders) > 0 {
		return s.Holders[0]
	}
	return sockdiag.FD{Inode: s.Inode}
}

func procSockets(p FillProc) ([]sockdiag.FD, error) {
	if p.Tree {
		return sockdiag.TreeSockets(p.PID)
	}
	return sockdiag.ProcessSockets(p.PID)
}

// fillEnds are the processes at the two ends of a side's bulk data going
// flow's way (side.bulkFlow: an exec side's client's own): the server
// sends for reads, the load (and, for an exec side, the command it runs)
// for writes. why says why there are none.
func fillEnds(sc model.SideConfig, flow model.Flow, srv, ld *child) (sender, receiver FillProc, why *model.Reason) {
	if ld == nil {
		return sender, receiver, &model.Reason{Kind: model.ReasonNotRunning}
	}
	load := FillProc{PID: ld.pid(), Tree: sc.Exec != ""}
	if srv == nil {
		return sender, receiver, &model.Reason{Kind: model.ReasonNotLocal, What: sc.Target}
	}
	server := FillProc{PID: srv.pid()}
	if srv.realPID > 0 {
		server = FillProc{PID: srv.realPID, Tree: true} // a real server (the side's server command) and what it starts
	}
	if flow == model.FlowWrite {
		return load, server, nil
	}
	return server, load, nil
}

// refreshFill points the side's group of the sampler at its current data
// connections; it is called before every poll, outside s.mu (it reads
// /proc). A side whose connections cannot be found keeps none, and the
// look's reason is noted for its samples (fillnotes.go).
func (p *Pair) refreshFill(s *side) {
	m := &p.fill
	s.mu.Lock()
	sc, flow, srv, ld := s.cfg, s.bulkFlow(), s.server, s.load
	s.mu.Unlock()
	if m.smp == nil {
		why, moment := FillReason(m.err)
		p.noteLook(s, ld, why, moment)
		return
	}
	snd, rcv, why := fillEnds(sc, flow, srv, ld)
	var senders []sockdiag.FD
	moment := false
	if why == nil {
		var err error
		m.mu.Lock()
		if m.conn != nil {
			senders, err = dataSenders(m.conn, snd, rcv, &m.looks, s.name)
		} else {
			err = errRunEnded
		}
		m.mu.Unlock()
		why, moment = FillReason(err)
	}
	m.smp.SetHeld(s.name, senders)
	p.noteLook(s, ld, why, moment)
}

// noteLook notes a look for ld's connections (why: why none were found;
// moment: for that moment only) and says the warning due for the span it
// ended, if any.
func (p *Pair) noteLook(s *side, ld *child, why *model.Reason, moment bool) {
	s.mu.Lock()
	endWarn := s.fill.look(ld, why, moment)
	s.mu.Unlock()
	p.warnFillOf(s, endWarn)
}

// takeFill is the fill of the side's data sockets since the last take.
func (p *Pair) takeFill(s *side) model.Fill {
	if p.fill.smp == nil {
		return model.NoFill
	}
	f := p.fill.smp.Take(s.name)
	if !f.OK() && f.Refused != nil {
		p.fill.noteRefusal(s.name, f.Refused)
	}
	return FillOf(f)
}

// noteRefusal keeps why a side's senders could not be read, for
// warnFill. It takes m.mu only: takeFill may be called under the side's
// lock.
func (m *fillMeter) noteRefusal(side string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refused == nil {
		m.refused = map[string]*model.Reason{}
	}
	m.refused[side] = wire.ReasonOf(err)
}

func (m *fillMeter) refusal(side string) *model.Reason {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused[side]
}

// FillOf is a sampler window as the model's figures (an exec sweep's
// sampler shares it).
func FillOf(f sockdiag.Fill) model.Fill {
	if !f.OK() {
		return model.NoFill
	}
	return model.Fill{Samples: f.Samples, FullPct: model.Figure(f.FullPct), EmptyPct: model.Figure(f.EmptyPct),
		Bytes: model.Figure(f.MeanBytes), Limit: f.Limit, Current: model.Figure(f.LastBytes)}
}

// warnFill says, once per side, why its fill is n/a when that is so
// over the span (fillnotes.go), not when a moment's look between two
// runs of a client found no connection.
func (p *Pair) warnFill(s *side, smp *model.Sample) {
	hasFill, refused := smp.Fill().Known(), (*model.Reason)(nil)
	if !hasFill && smp.Active {
		refused = p.fill.refusal(s.name)
	}
	s.mu.Lock()
	why := s.fill.sample(hasFill, smp.Active, refused)
	s.mu.Unlock()
	p.warnFillOf(s, why)
}

// warnFillEnds says, at the run's end, why a side's fill is n/a over its
// last span, where no sample said so yet.
func (p *Pair) warnFillEnds() {
	for _, s := range p.sides {
		if s == nil {
			continue
		}
		s.mu.Lock()
		why := s.fill.spanEnd()
		s.mu.Unlock()
		p.warnFillOf(s, why)
	}
}

// warnFillOf warns that the side's fill is n/a for why (nil: nothing to
// say).
func (p *Pair) warnFillOf(s *side, why *model.Reason) {
	if why != nil {
		p.raise(model.Warn(s.id, model.FillNotMeasured{Reason: *why}))
	}
}
