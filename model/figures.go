package model

// This file holds the figures of a side — one interval (Sample), a whole
// run (Summary) or a stretch of it with unchanged settings (Segment) — as
// one struct, Figures, with a method for everything derived from it. Like
// fio's thread_stat: the run table, JSON, CSV, the explorer and the charts
// all print these fields and call these methods; none derives its own.

// Stamp is the settings a figure was measured under: what the side was
// set to while the interval ran (not what a user has asked for since).
// Two stretches with equal stamps are comparable; a change of any field
// starts a new segment.
type Stamp struct {
	Workload     Workload    `json:"workload" setting:"workload"`
	ReadPercent  int         `json:"read_percent,omitempty" setting:"read-percent"` // mixed only
	Transport    Transport   `json:"transport" setting:"transport"`
	SndBuf       string      `json:"sndbuf" setting:"sndbuf"` // server SO_SNDBUF as requested; "external"
	ClientSndBuf string      `json:"client_sndbuf" setting:"client-sndbuf"`
	ClientRcvBuf string      `json:"client_rcvbuf" setting:"client-rcvbuf"`
	ServerRcvBuf string      `json:"server_rcvbuf,omitempty" setting:"server-rcvbuf"` // server SO_RCVBUF as requested
	Connections  int         `json:"connections" setting:"connections"`
	RequestSize  int         `json:"request_size" setting:"request-size"`
	InFlight     int         `json:"in_flight" setting:"in-flight"`
	Placement    Place       `json:"placement" setting:"placement"`
	Consume      ConsumeMode `json:"consume" setting:"consume"`
	// HashThreads (0: auto) and Exec (empty: our load) change live too, so
	// a change of them starts a segment like any other; omitted when at
	// their defaults, as in runs saved before the stamp carried them.
	HashThreads int    `json:"hash_threads,omitempty" setting:"hash-threads"`
	Exec        string `json:"exec,omitempty" setting:"exec"`
	// Reader is how our load waited for its socket (poll, netpoller); a
	// run saved before the stamp carried it has none: its load read
	// through Go's netpoller.
	Reader ReaderMode `json:"reader,omitempty" setting:"reader"`
	Server string     `json:"server,omitempty" setting:"server"` // a real server command; empty: ours
}

// Figures are what a side measured over a span of time: the fields a
// Sample and a Summary share.
type Figures struct {
	// Settings are those in force while the figures were measured.
	// Changed is set when they changed within the span (a sample during
	// which a change took effect, a whole run with changes): then
	// Settings are those at its end, and the figures mix before and after.
	Settings Stamp `json:"settings"`
	Changed  bool  `json:"settings_changed,omitempty"`
	// Flow is which way the bulk data went (flow.go; read it with
	// Direction()): "" for our load, whose workload says it; a real
	// client's as its server saw it; "changed" across a change of
	// direction, where the receiver's figures are n/a.
	Flow          Flow    `json:"flow,omitempty"`
	Seconds       float64 `json:"seconds"` // load running (active) seconds
	Bytes         uint64  `json:"bytes"`
	ThroughputBps Figure  `json:"throughput_bps"`
	// The bulk sender's send-buffer fill (fill.go; read it with Fill()):
	// the share of samples it was full and empty, the mean bytes in
	// flight; null when not measured (a warning of kind "fill" says why).
	SndBufFullPct     MaybeFigure `json:"sndbuf_full_pct"`
	SndBufEmptyPct    MaybeFigure `json:"sndbuf_empty_pct"`
	SndBufFillBytes   MaybeFigure `json:"sndbuf_fill_bytes"`
	SndBufFillSamples int         `json:"sndbuf_fill_samples,omitempty"`
	SndBufFillLimit   int64       `json:"sndbuf_fill_limit,omitempty"`
	// SndBufFillSource is what measured the fill (Fill.Source), and
	// SndBufFillSampled why the sampler did where the kernel was asked.
	SndBufFillSource  string   `json:"sndbuf_fill_source,omitempty"`
	SndBufFillSampled string   `json:"sndbuf_fill_sampled,omitempty"`
	Client            Process  `json:"client"`
	Server            *Process `json:"server"` // nil for an external target, or unattributed (ServerNA)
	SndBuf            Buffers  `json:"sndbuf"`
	// TargetServer is the local process that serves a --target and is
	// measured and tuned as a real server (nil: none, or not one nbdscope
	// may look at: the target's warning says why).
	TargetServer *RealProcess `json:"target_server,omitempty"`
	Placement    Placement    `json:"placement"`
	LatencyP50Ms Figure       `json:"latency_p50_ms"`
	LatencyP99Ms Figure       `json:"latency_p99_ms"`
	LatencyMaxMs Figure       `json:"latency_max_ms"` // the longest request completed in the span
	// Errors are the requests that failed; nil (JSON null) where the
	// requests are not seen: a real client's (--exec), whose failing run
	// ends the side and is reported as its crash.
	Errors *uint64 `json:"errors"`

	// ServerNA is why Server is null although the server is measured: one
	// --target process serves both sides and both loads ran in the span
	// (serverspan.go). ServerUnattributed counts the span's samples whose
	// server counts were not attributed for that reason; when it is not 0,
	// Server's figures are over the other samples only, whose payload and
	// load seconds are ServerBytes and ServerSeconds.
	ServerNA           *Reason `json:"server_na,omitempty"`
	ServerUnattributed int     `json:"server_unattributed_samples,omitempty"`
	ServerBytes        uint64  `json:"server_bytes,omitempty"`
	ServerSeconds      float64 `json:"server_seconds,omitempty"`
}

// ErrorCount is Errors, 0 where they are not seen.
func (f Figures) ErrorCount() uint64 {
	if f.Errors == nil {
		return 0
	}
	return *f.Errors
}

// IsWrite reports whether the bulk data flows from the client to the
// server (write workloads).
func IsWrite(workload Workload) bool { return workload == WorkWrite || workload == WorkRandWrite }

// ReceiverName names the process that receives the bulk data under
// workload: the server for writes, the client otherwise (for mixed too:
// the headline stays the client's receive calls). A span's receiver is
// its Figures.ReceiverName: a real client's direction is its own.
func ReceiverName(workload Workload) string { return FlowOf(workload).Receiver() }

// SenderName names the process that sends the bulk data under workload.
func SenderName(workload Workload) string { return FlowOf(workload).Sender() }

// process returns the named process's figures (nil: not measured, or no
// one process: "").
func (f *Figures) process(name string) *Process {
	switch name {
	case "server":
		return f.Server
	case "client":
		return &f.Client
	}
	return nil
}

// Receiver is the figures of the process that received the bulk data
// (Direction); nil when it was not measured (the server of an external
// target) or when it changed within the span (ReceiverNA says so).
func (f *Figures) Receiver() *Process { return f.process(f.Direction().Receiver()) }

// Sender is the figures of the process that sent the bulk data; nil as
// Receiver.
func (f *Figures) Sender() *Process { return f.process(f.Direction().Sender()) }

// ReceiverCallsPer2MiB is the headline figure: receive calls per 2 MiB of
// the process receiving the bulk data.
func (f *Figures) ReceiverCallsPer2MiB() Figure {
	return figureOf(f.Receiver(), func(p *Process) Figure { return p.RecvCallsPer2MiB })
}

// ReceiverEAGAINPer2MiB is the receiver's receive calls that found no data.
func (f *Figures) ReceiverEAGAINPer2MiB() Figure {
	return figureOf(f.Receiver(), func(p *Process) Figure { return p.RecvEAGAINPer2MiB })
}

// SenderCallsPer2MiB is the send calls per 2 MiB of the process sending
// the bulk data. For writes this is the figure the client's send buffer
// moves (the server drains each chunk as it arrives, so its receive calls
// show the reader's pace, not the buffer).
func (f *Figures) SenderCallsPer2MiB() Figure {
	return figureOf(f.Sender(), func(p *Process) Figure { return p.SendCallsPer2MiB })
}

// SenderEAGAINPer2MiB is the sender's send calls that found the socket
// buffer full, per 2 MiB.
func (f *Figures) SenderEAGAINPer2MiB() Figure {
	return figureOf(f.Sender(), func(p *Process) Figure { return p.SendEAGAINPer2MiB })
}

// figureOf is a figure of p, Unknown when there is no such process (the
// server of an external target).
func figureOf(p *Process, of func(*Process) Figure) Figure {
	if p == nil {
		return Unknown
	}
	return of(p)
}

// CPU is the CPU of a side's processes together.
type CPU struct {
	UserS, SysS Figure
	CoresBusy   Figure // CPU seconds per second of load
	SPerGiB     Figure // CPU seconds per GiB of payload
	// ClientOnly is set when the server is not measured (an external
	// target): the figures are the client's alone.
	ClientOnly bool
}

// CPU adds up the client's and the server's CPU.
func (f *Figures) CPU() CPU {
	c := f.Client
	if f.Server == nil {
		return CPU{c.UserS, c.SysS, c.CoresBusy, c.CPUSPerGiB, true}
	}
	s := f.Server
	return CPU{SumFigures(c.UserS, s.UserS), SumFigures(c.SysS, s.SysS),
		SumFigures(c.CoresBusy, s.CoresBusy), SumFigures(c.CPUSPerGiB, s.CPUSPerGiB), false}
}

// SumFigures is a + b, unknown when either is.
func SumFigures(a, b Figure) Figure {
	if !a.Known() || !b.Known() {
		return Unknown
	}
	return a + b
}

// Add returns the figures of f and o together, as if measured over both
// spans: counts and seconds add up, the per-2-MiB figures, throughput and
// CPU are derived again. Latency percentiles cannot be added: they are
// unknown unless one span is empty. The settings are f's (o's if f is
// empty); Changed is set when the two differ. Across a change of the
// bulk data's direction the receiver's and sender's figures and the fill
// are unknown (flow.go).
func (f Figures) Add(o Figures) Figures {
	if f.Bytes == 0 && f.Seconds == 0 {
		return o
	}
	if o.Bytes == 0 && o.Seconds == 0 {
		return f
	}
	sum := f
	sum.Changed = f.Changed || o.Changed || f.Settings != o.Settings
	sum.Settings = o.Settings
	sum.SndBuf, sum.Placement, sum.TargetServer = o.SndBuf, o.Placement, o.TargetServer
	sum.Bytes += o.Bytes
	sum.Seconds += o.Seconds
	if f.Errors != nil || o.Errors != nil { // the spans whose requests were seen
		n := f.ErrorCount() + o.ErrorCount()
		sum.Errors = &n
	}
	sum.ThroughputBps = Throughput(sum.Bytes, sum.Seconds)
	sum.Flow = f.Direction().Join(o.Direction())
	fill := f.Fill().Add(o.Fill())
	if sum.Flow == FlowChanged {
		fill = NoFill // two senders' buffers, each against its own limit
	}
	sum.SetFill(fill)
	sum.Client = ProcessFigures(f.Client.Counters().Add(o.Client.Counters()), sum.Bytes, sum.Seconds)
	sum.addServer(f, o)
	sum.LatencyP50Ms, sum.LatencyP99Ms = Unknown, Unknown
	// A longest request adds exactly: the larger, or the one measured.
	if !sum.LatencyMaxMs.Known() || o.LatencyMaxMs.Known() && o.LatencyMaxMs > sum.LatencyMaxMs {
		sum.LatencyMaxMs = o.LatencyMaxMs
	}
	return sum
}

// RealProcess names a process nbdscope did not start but measures.
type RealProcess struct {
	PID     int    `json:"pid"`
	Command string `json:"command"` // its command line, arguments joined by spaces
	// BuffersNA is why its buffers are left as they are (another user's,
	// Yama, macOS …); nil: they follow the side's settings.
	BuffersNA *Reason `json:"buffers_na,omitempty"`
}

// RecentSeconds is the span of a sample's Recent figures.
const RecentSeconds = 2.0

// Sample is one interval of one side.
type Sample struct {
	T      float64 `json:"t"` // seconds since the run started
	Side   SideID  `json:"side"`
	Active bool    `json:"active"` // the load ran for ≥ 1/4 of the interval (not paused or off-turn)
	// Warming: the side's turn has come and its load is still faulting
	// in its buffers (its first resume waits up to 5 s for that).
	Warming bool `json:"warming,omitempty"`
	Figures
	Connections int `json:"connections"` // connections open at the end
	// Turn is the side's figures over its current turn, or over its last
	// one while it waits (or is paused): from the turn's first sample to
	// this one, the drain after the turn included, added up as the run's
	// summary adds its samples (nil before any). A turn starts again at a
	// change of the settings. In process only: what the explorer shows
	// of a side that waits; a saved run's samples hold none.
	Turn *Figures `json:"-"`
	// Recent is the side's figures over its latest samples in which its
	// load ran, the last RecentSeconds of unchanged settings, added up as
	// Turn is (nil before any): one sample is too short to say which
	// process used all of its core, or who waited. In process only: the
	// explorer's pace and fill rows.
	Recent *Figures `json:"-"`
	// RootDigest is set on the sample in which a hashed pass over the
	// export completed: that pass's root digest (consume hash).
	RootDigest string `json:"root_digest,omitempty"`
}

// Event is a change of a setting, recorded at the time it took effect.
type Event struct {
	T       float64 `json:"t"`
	Side    SideID  `json:"side"` // WholePair for the mode
	Setting string  `json:"setting"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	// Reconnected: the side's connections were re-opened to apply the
	// change (a TCP buffer back to the OS default: Linux keeps a buffer
	// that was set locked, without autotuning, until the socket closes).
	Reconnected bool `json:"reconnected,omitempty"`
	// Effective and Reached (a real server's buffer): the value read back
	// from its socket, and how many of its sockets the change reached.
	Effective int  `json:"effective,omitempty"`
	Reached   *int `json:"sockets_reached,omitempty"`
	// NoOp: To is the value that was in force already, so nothing changed
	// (a script's --at 3s:b.sndbuf=2m on a side that started at 2m); the
	// samples on either side of it are the same setting, not a before and
	// an after. NoOpNote words it.
	NoOp bool `json:"no_op,omitempty"`
	// Value is To as the setting's typed value (in process only).
	Value Value `json:"-"`
}

// ExecRunEvent is the Event.Setting of a finished client run of an exec
// side; To is its time ("2.314s").
const ExecRunEvent = "exec.run"

// Summary is a side over a whole run, or over one segment of it (active
// time only).
type Summary struct {
	Figures
	// Consume is the side's consume mode at the end of the span; Consumed
	// what the modes found over it (zero buffers, hashed blocks, the root
	// digest of the last full pass), nil (JSON null) where our load never
	// ran in it: a real client's data is its own (--exec).
	Consume  ConsumeMode    `json:"consume"`
	Consumed *ConsumeCounts `json:"consumed"`
	// Spread is how steady the samples were (spread.go); nil in a run
	// saved before it was kept.
	Spread *Spread `json:"spread,omitempty"`
	// PayloadAssumed: a real client against a real server, whose payload
	// nothing counts: each finished client run was taken to move the
	// export once (as an exec sweep's ExecRun), and the bytes, throughput
	// and figures per 2 MiB are of that.
	PayloadAssumed bool `json:"payload_assumed,omitempty"`
}

// Segment is a stretch of a run with unchanged settings: the summary of
// the samples stamped alike, from the start of the first to the end of the
// last. A sample during which a setting changed belongs to no segment (its
// figures mix before and after); the whole run's summary includes it.
type Segment struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Summary
}
