package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/probe/sockdiag"
	"nbdscope/probe/syscount"
)

// The send-buffer fill of each side's data sockets, measured from outside
// the measured processes, which do nothing for it: in the kernel
// (syscount.FillMeter: by default its timer's programs, which read the
// level 1000 times a second; its exact programs at every skb when
// --fill-source kernel-events asks), where its programs load and the
// side's data sockets are unix sockets, else sampled by the controller
// (probe/sockdiag), 100 times a second. Each side is a group of the
// meter, whose senders are the bulk sender's sockets connected to the
// receiver, pointed at before every poll (connections come and go with
// reconnects and restarts) and looked for again in /proc when the
// children's replies say one came or went (filllook.go), and whose window is taken at every sample,
// so each Sample carries the fill of its own interval. The sampler starts
// only for a side the kernel cannot measure, so that where the programs
// load nothing wakes 100 times a second.

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

// fillSteady is the share of an interval the load must have run for its
// fill to count in the run's and the segments' figures: the interval at
// the start or end of an alternate-mode turn holds an idle buffer too.
const fillSteady = 0.9

// FillProc is a process at one end of a side's data connections, named by
// its PID alone so that any process can be one: our server or load child,
// or a real server or client we did not start. Tree includes everything
// it started (an exec side's client command runs under the load child).
type FillProc struct {
	PID  int
	Tree bool
}

// fillMeter is the pair's fill meters and the sock_diag socket used to
// find the sides' connections.
type fillMeter struct {
	// kern measures in the kernel, unless the run asked for the sampler
	// (--fill-source sampler); nil then, or where its programs cannot
	// load (no BPF rights, no kernel BTF, macOS: doctor says which), and
	// the sampler measures. Its sides' source is asked (FillSourceKernel
	// or FillSourceEvents).
	kern *syscount.FillMeter

	mu  sync.Mutex // all below: the two sides' polls look up at once
	ctx context.Context
	// smp is the sampler, started for the first side the kernel does not
	// measure; err is why fill cannot be measured here at all, or why
	// the sampler could not start.
	smp     *sockdiag.Sampler
	err     error
	conn    *sockdiag.Conn
	looks   lookCache
	refused map[string]*model.Reason // by side: why its senders could not be read
	sources map[string]string        // by side: what measures its fill (model.FillSource…)
	sampled map[string]string        // by side: why the sampler does where the kernel was asked (model.FillSampled…)
	// asked is the source the run asked for (Config.FillSource).
	asked string
}

// openKernelFill loads the kernel's fill programs; tests replace it to
// run the sampler.
var openKernelFill = OpenKernelFill

// OpenKernelFill loads the kernel's fill programs source asks for: the
// timer's (model.FillSourceKernel) or the exact ones at every change
// (model.FillSourceEvents). An exec sweep's fill shares it.
func OpenKernelFill(source string) (*syscount.FillMeter, error) {
	if source == model.FillSourceEvents {
		return syscount.OpenFillEvents()
	}
	return syscount.OpenFillMeter()
}

// start starts measuring until ctx ends or stop; a failure leaves the
// meter without a sampler and the reason in err.
func (m *fillMeter) start(ctx context.Context, source string) {
	conn, err := sockdiag.Dial()
	if err != nil {
		m.err = err
		return
	}
	m.ctx, m.conn, m.asked = ctx, conn, source
	if model.FillInKernel(source) {
		if k, err := openKernelFill(source); err == nil {
			m.kern = k
			return
		}
	}
	m.mu.Lock()
	m.startSampler()
	m.mu.Unlock()
}

// startSampler starts the sampler, once; m.mu is held.
func (m *fillMeter) startSampler() *sockdiag.Sampler {
	if m.smp != nil || m.err != nil || m.ctx == nil {
		return m.smp
	}
	m.smp, m.err = sockdiag.StartSampler(m.ctx, sockdiag.SamplerConfig{Rate: fillRate, RecvEvery: fillRecvEvery})
	return m.smp
}

// sampler is the sampler, nil until a side needed it.
func (m *fillMeter) sampler() *sockdiag.Sampler {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.smp
}

// measuring says whether fill can be measured here at all.
func (m *fillMeter) measuring() bool { return m.kern != nil || m.sampler() != nil }

// stop ends the measuring and closes the lookup socket.
func (m *fillMeter) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.smp != nil {
		m.smp.Stop()
	}
	if m.kern != nil {
		m.kern.Close()
	}
	if m.conn != nil {
		m.conn.Close()
		m.conn = nil // a poll still running finds nothing rather than a reused fd
	}
}

// DataSenders lists the sockets of sender that are connected to a socket
// of receiver: the data connections between the two, seen from the
// sender's end, each with the descriptor the sender holds it by (the
// sampler reads it through that: sockdiag.Sampler.SetHeld). Every other
// socket either holds (a listener, the control pipe to the controller, a
// connection elsewhere) is left out.
func DataSenders(conn *sockdiag.Conn, sender, receiver FillProc) ([]sockdiag.FD, error) {
	out, _, err := dataSenders(conn, sender, receiver, nil, "")
	return out, err
}

// DataSendersUnix is DataSenders, and whether every one is a unix
// socket, which the kernel's fill programs measure (an exec sweep's
// fill: sweep/execfill.go).
func DataSendersUnix(conn *sockdiag.Conn, sender, receiver FillProc) ([]sockdiag.FD, bool, error) {
	return dataSenders(conn, sender, receiver, nil, "")
}

// dataSenders is DataSenders, and whether every one is a unix socket
// (which the kernel's fill programs measure), reusing a side's last look
// (looks, by side) when it still holds: each look described both
// processes' sockets through two namespace-wide sock_diag dumps, at every
// poll of each side.
func dataSenders(conn *sockdiag.Conn, sender, receiver FillProc, looks *lookCache, side string) (out []sockdiag.FD, allUnix bool, err error) {
	if out, allUnix, ok := looks.quiet(side, sender, receiver); ok {
		return out, allUnix, nil
	}
	sfds, err := procSockets(sender)
	if err != nil {
		return nil, false, fmt.Errorf("the sender's sockets (PID %d): %w", sender.PID, err)
	}
	rfds, err := procSockets(receiver)
	if err != nil {
		return nil, false, fmt.Errorf("the receiver's sockets (PID %d): %w", receiver.PID, err)
	}
	if out, allUnix, ok := looks.reuse(side, sfds, rfds); ok {
		looks.keepGen(side, sender, receiver)
		return out, allUnix, nil
	}
	ss, err := conn.Describe(sfds)
	if err != nil {
		return nil, false, err
	}
	rs, err := conn.Describe(rfds)
	if err != nil {
		return nil, false, err
	}
	allUnix = true
	for _, l := range sockdiag.Links(ss, rs) {
		out = append(out, holderOf(l.A, sender.PID))
		allUnix = allUnix && l.A.Kind == sockdiag.KindUnix
	}
	if len(out) == 0 {
		return nil, false, noConnection{sender.PID, receiver.PID}
	}
	looks.keep(side, sfds, rfds, ss, out, allUnix)
	looks.keepGen(side, sender, receiver)
	return out, allUnix, nil
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

// procScans counts the processes' socket listings read from /proc (a
// tree counts once): tests bound them.
var procScans atomic.Int64

func procSockets(p FillProc) ([]sockdiag.FD, error) {
	procScans.Add(1)
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
// connections; it is called before every poll, and after one whose
// replies say a connection came or went (noteReplies), outside s.mu (it
// may read /proc). A side whose connections cannot be found keeps none, and the
// look's reason is noted for its samples (fillnotes.go).
func (p *Pair) refreshFill(s *side) {
	m := &p.fill
	s.mu.Lock()
	sc, flow, srv, ld := s.cfg, s.bulkFlow(), s.server, s.load
	s.mu.Unlock()
	if !m.measuring() {
		why, moment := FillReason(m.err)
		p.noteLook(s, ld, why, moment)
		return
	}
	if m.kern != nil && p.turns.userPaused(s.id.Index()) && model.FillInKernel(m.sourceOf(s.name)) {
		// A paused side moves nothing: its sockets leave the kernel's
		// meter, whose timers stop when no side is watched, so that a
		// paused explorer wakes no CPU 1000 times a second.
		m.kern.Set(s.name, nil)
		return
	}
	snd, rcv, why := fillEnds(sc, flow, srv, ld)
	var looked error
	if why != nil {
		looked = errNoEnds
	}
	m.mu.Lock()
	err := m.point(s.name, snd, rcv, looked)
	m.mu.Unlock()
	moment := false
	if why == nil {
		why, moment = FillReason(err)
	}
	p.noteLook(s, ld, why, moment)
}

// noteReplies keeps what a poll's replies (lm from ld, sm from srv) say
// of the side's connections, and looks for them again at once if that
// differs from what its kept look was made under (filllook.go).
func (p *Pair) noteReplies(s *side, ld, srv *child, lm, sm wire.Msg) {
	g := connGen{load: ld.pid(), open: sm.Conns, accepted: sm.Accepted, conns: lm.Conns}
	if srv != nil && srv.realPID == 0 {
		g.server = srv.pid()
	}
	m := &p.fill
	m.mu.Lock()
	due := m.looks.noteReplies(s.name, g)
	m.mu.Unlock()
	if due {
		p.refreshFill(s)
	}
}

// errNoEnds is a look that had no processes to look between (fillEnds
// says why).
var errNoEnds = errors.New("no ends to look between")

// point points the side's group at its data senders (none when looked
// is an error): in the kernel where it measures them all (a look that
// found none leaves a side there, unless the sampler has it), else in
// the sampler, started for it. m.mu is held.
func (m *fillMeter) point(side string, snd, rcv FillProc, looked error) error {
	var senders []sockdiag.FD
	allUnix := false
	switch {
	case looked != nil:
	case m.conn == nil:
		looked = errRunEnded
	default:
		senders, allUnix, looked = dataSenders(m.conn, snd, rcv, &m.looks, side)
	}
	if m.sources == nil {
		m.sources = map[string]string{}
	}
	if m.kern != nil && (allUnix || looked != nil && m.sources[side] != model.FillSourceSampler) {
		var inodes []uint64
		for _, h := range senders {
			inodes = append(inodes, uint64(h.Inode))
		}
		if err := m.kern.Set(side, inodes); err != nil && looked == nil {
			looked = err
		}
		m.sources[side] = m.asked
		senders = nil
	} else if smp := m.startSampler(); smp != nil {
		m.sources[side] = model.FillSourceSampler
		m.noteSampled(side, looked)
		if m.kern != nil {
			m.kern.Set(side, nil)
		}
	}
	if m.smp != nil {
		m.smp.SetHeld(side, senders)
	}
	return looked
}

// noteSampled notes why the sampler measures the side (looked: the
// look's failure, which says nothing of its sockets). m.mu is held.
func (m *fillMeter) noteSampled(side string, looked error) {
	if m.sampled == nil {
		m.sampled = map[string]string{}
	}
	switch {
	case !model.FillInKernel(m.asked):
		m.sampled[side] = model.FillSampledAsked
	case m.kern == nil:
		m.sampled[side] = model.FillSampledNoBPF
	case looked == nil:
		m.sampled[side] = model.FillSampledTCP
	}
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
	if k, src := p.fill.kern, p.fill.sourceOf(s.name); k != nil && model.FillInKernel(src) {
		fl := KernelFillOf(k.Take(s.name))
		fl.Source = src
		return fl
	}
	smp := p.fill.sampler()
	if smp == nil {
		return model.NoFill
	}
	f := smp.Take(s.name)
	if !f.OK() && f.Refused != nil {
		p.fill.noteRefusal(s.name, f.Refused)
	}
	fl := FillOf(f)
	fl.Source, fl.Sampled = model.FillSourceSampler, p.fill.sampledWhy(s.name)
	return fl
}

// sampledWhy is why the sampler measures the side ("" when asked or not
// known).
func (m *fillMeter) sampledWhy(side string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sampled[side]
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

// sourceOf is what measures the side's fill ("" before its first look).
func (m *fillMeter) sourceOf(side string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sources[side]
}

// labelFillSources names in the report what measured each side's fill.
func (p *Pair) labelFillSources(rep *model.Report) {
	for i := range rep.Sides {
		if i < len(p.sides) && p.sides[i] != nil {
			rep.Sides[i].FillSource = p.fill.sourceOf(p.sides[i].name)
		}
	}
}

// KernelFillOf is a kernel window as the model's figures. Its Samples,
// which weigh it against other spans (model.Fill.Add), are the
// socket-time it measured counted in the sampler's ticks, so that a
// span weighs by its length whichever measured it.
func KernelFillOf(w syscount.FillWindow) model.Fill {
	if !w.OK() {
		return model.NoFill
	}
	return model.Fill{Samples: max(1, int(math.Round(w.Seconds*fillRate))), FullPct: model.Figure(w.FullPct),
		EmptyPct: model.Figure(w.EmptyPct), Bytes: model.Figure(w.MeanBytes), Limit: w.Limit, Current: model.Figure(w.LastBytes)}
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
