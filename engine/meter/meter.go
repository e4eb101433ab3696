package meter

import (
	"nbdscope/model"
	"nbdscope/nbd"
)

// FillSteady is the share of an interval the load must have run for its
// fill to count in the run's and the segments' figures: the interval at
// the start or end of an alternate-mode turn holds an idle buffer too.
const FillSteady = 0.9

// Meter is one side's accounting over a run (across its loads'
// restarts): the last reading, the run's totals, its segments, its
// current turn, and the spans of a shared server (spans.go).
type Meter struct {
	prev    Reading
	started bool // prev holds a reading of the current load
	// prevStamp is the settings at the last sample: a sample whose stamp
	// differs straddles a change.
	prevStamp model.Stamp
	segs      []segTotals
	tot       totals
	pendLat   int64 // ns: the longest request of readings folded into the next sample
	// turn are the totals of the side's current (or last) turn, inTurn
	// whether its load ran at the last sample (turn.go).
	turn   totals
	inTurn bool
	spans  spans
	flow   flows
	recent []recentSpan // the last model.RecentSeconds of active samples (recent.go)
	// settled is the run's totals at the last sample whose payload was
	// settled (Settle): nil for a side whose payload is counted as it
	// moves, which is every side but a real client against a real server.
	settled *totals
}

// Settle marks the payload counted so far as whole: a real client against
// a real server, whose bytes are counted one export a finished run, has
// settled them at the sample its runs ended in. The run's summary then
// ends there, not at the run's end: the calls and time of a client run
// still going when the run ended belong to bytes never counted, and read
// its throughput 14% low (0.43 GiB/s against its runs' 0.50) and its
// calls per 2 MiB as much high.
func (m *Meter) Settle() {
	t := m.tot
	t.hist = append([]uint64(nil), m.tot.hist...)
	m.settled = &t
}

// Settled tells whether the summary ends at a Settle.
func (m *Meter) Settled() bool { return m.settled != nil }

// Span is what the engine knows of a sample beside its readings: when
// it is, the settings and buffers in force, where the processes ran, and
// how its server's counts are to be taken.
type Span struct {
	T            float64 // seconds since the run's start, at the reading
	Side         model.SideID
	Stamp        model.Stamp
	Placement    model.Placement
	Buffers      model.Buffers
	TargetServer *model.RealProcess
	Exec         bool // the load is a real client (an exec side)
	ExecCounted  bool // its socket calls are counted
	HasServer    bool // a server child reports (not an external target)
	Shared       bool // the server is a --target process serving the other side too
	Fill         model.Fill
}

// Started tells whether the meter holds a reading of the current load
// to measure the next one against.
func (m *Meter) Started() bool { return m.started }

// Begin starts a new load's readings at r, stamped st: the next sample
// is measured from it. The run's totals and segments go on.
func (m *Meter) Begin(r Reading, st model.Stamp) {
	m.prev, m.started, m.prevStamp = r, true, st
	m.spans.begin(r)
}

// Stop forgets the last reading: the load is being replaced, and the next
// reading is a new load's first (Begin).
func (m *Meter) Stop() { m.started = false }

// Last is the last reading a sample was measured to (or Begin's).
func (m *Meter) Last() Reading { return m.prev }

// Wall is the seconds from the last reading to r, by the controller's
// clock.
func (m *Meter) Wall(r Reading) float64 { return r.At.Sub(m.prev.At).Seconds() }

// Fold folds a reading into the next sample rather than make a sliver
// of a sample of it (a tick right after a late one): only its longest
// request is kept, which the load reports since its last poll.
func (m *Meter) Fold(r Reading) { m.pendLat = max(m.pendLat, r.Load.MaxLatNs) }

// delta is what the load and server did between the last reading and r.
func (m *Meter) delta(r Reading, sp Span) Delta {
	prev := m.prev
	d := Delta{Fill: sp.Fill}
	d.Bytes = r.Load.Bytes - prev.Load.Bytes
	if sp.Exec {
		d.Bytes = serverPayload(r.Server, prev.Server) // the client's own count is not ours: the server's
		d.Unseen = true                                // nor are its requests, nor their failures
	}
	d.Active = float64(r.Load.ActiveNs-prev.Load.ActiveNs) / 1e9
	d.Client = r.Load.Counters.Sub(prev.Load.Counters)
	if c, p := r.Load.ClockCPU, prev.Load.ClockCPU; c != nil && p != nil {
		// The CPU of the same moments as the active clock: what the load
		// did paused (warming its buffers before a first resume) is in
		// neither, so CPU per second of load is at most its cores.
		d.Client.UserS, d.Client.SysS = c.UserS-p.UserS, c.SysS-p.SysS
	}
	d.Hist = model.HistDiff(r.Load.Hist, prev.Load.Hist)
	d.Errors = r.Load.Errors - prev.Load.Errors
	d.MaxLat = max(m.pendLat, r.Load.MaxLatNs)
	m.pendLat = 0
	return d
}

// busyBase is the seconds a span's CPU is divided by for cores busy. A
// load whose CPU is read at its clock's edges (ClockCPU) is per second
// of its active clock, whatever share of the interval it ran. A
// process's whole CPU (a server, a real client) in a sample in which the
// load ran at least a quarter of the interval is per second of load
// (alternate and concurrent then agree); in one in which it hardly ran
// (the drain after a turn) over the interval between the readings, as
// the CPU is: over the drain's 0.024 s a server's 0.028 s read 1.16.
func busyBase(d Delta, wall float64, clocked bool) float64 {
	switch {
	case clocked && d.Active > 0:
		return d.Active
	case d.Active > 0 && d.Active >= wall/4:
		return d.Active
	}
	return wall
}

// Sample measures the reading r against the last one: a Sample stamped
// sp.Stamp, added to the run's, the turn's and the segment's totals.
func (m *Meter) Sample(r Reading, sp Span) model.Sample {
	wall := m.Wall(r)
	d := m.delta(r, sp)
	// A sample counts as active when the load ran for at least a quarter
	// of it: the interval after an alternate-mode turn holds only the
	// drain of the requests in flight, whose figures mean little.
	isActive := d.Active > 0 && d.Active >= wall/4
	clocked := r.Load.ClockCPU != nil && m.prev.Load.ClockCPU != nil
	if sp.HasServer {
		d.Server, d.SrvUnknown = m.spans.take(r, sp.Shared)
	}
	smp := model.Sample{T: sp.T, Side: sp.Side, Active: isActive, Warming: r.Load.Warming, Connections: r.Load.Conns}
	smp.Figures = d.figures(busyBase(d, wall, clocked), busyBase(d, wall, false), sp.HasServer)
	ExecClient(sp.Exec, sp.ExecCounted, &smp.Figures)
	smp.Settings = sp.Stamp
	smp.Changed = sp.Stamp != m.prevStamp
	smp.Placement = sp.Placement
	smp.SndBuf = sp.Buffers
	smp.TargetServer = sp.TargetServer
	if d.Active < FillSteady*wall {
		// A paused or off-turn stretch's buffer is empty because nothing
		// ran: the sample says so, the run's and segment's shares count
		// only intervals the load ran throughout.
		d.Fill = model.Fill{}
	}
	m.tot.add(d)
	m.tot.consumed.AddBetween(r.Load.Consumed, m.prev.Load.Consumed)
	m.addToTurn(d, isActive || r.Load.Warming, smp.Changed)
	smp.Turn = m.turnFigures(smp.Figures, sp)
	m.addRecent(sp.T, d, isActive, smp.Changed)
	smp.Recent = m.recentFigures(smp.Figures, sp)
	smp.RootDigest = model.PassRoot(r.Load.Consumed, m.prev.Load.Consumed)
	if !smp.Changed {
		seg := m.segment(sp.Stamp, sp.T-wall, sp.T, smp)
		seg.add(d)
		seg.consumed.AddBetween(r.Load.Consumed, m.prev.Load.Consumed)
	}
	m.prevStamp = sp.Stamp
	m.prev = r
	return smp
}

// serverPayload is the payload a server moved between two readings
// (READ data sent plus WRITE data received): an exec side's bytes.
func serverPayload(now, prev Server) uint64 {
	if now.Payload == nil || prev.Payload == nil {
		return 0
	}
	return now.Payload.Sub(*prev.Payload).Total()
}

// PayloadSince is what the server moved since the last reading, by
// direction; zero where either reading has none, or the counts went back
// (a new server).
func (m *Meter) PayloadSince(now Server) nbd.Payload {
	p := m.prev.Server.Payload
	if !m.started || now.Payload == nil || p == nil || now.Payload.ReadBytes < p.ReadBytes || now.Payload.WriteBytes < p.WriteBytes {
		return nbd.Payload{}
	}
	return now.Payload.Sub(*p)
}
