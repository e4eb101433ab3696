package model

// This file is the table of figures, beside the table of settings
// (setting.go): each figure a span of a side reports is one entry, with
// its key, its labels, its unit and format, the process it belongs to,
// how it is read from Figures, whether a ratio of it means something and
// why it is unknown where that reason is fixed. The CSV's figure columns
// (csv.go), run's summary rows (report) and the JSON test read it; a new
// figure is one entry here (and, where it has one, its field and JSON
// key). Like fio's options.c beside stat.h's thread_stat: one table, one
// struct summed by one path (Figures.Add), several printers.

// FigureFormat is how a figure is printed in the tables.
type FigureFormat int

// The formats of the figures. FormatRate follows report's --rate-unit.
const (
	FormatFixed1 FigureFormat = iota // 13.5
	FormatFixed2                     // 0.97
	FormatFixed3                     // 0.412
	FormatRate                       // 3.21 GiB/s
	FormatBytes                      // 1.8 MiB
	FormatMs3                        // seconds shown as ms: 0.412 (ms)
)

// Owner is whose figure an entry is: the side's (its load's payload and
// latency, its bulk sender's buffer), one of its two processes, or the
// process that received or sent the bulk data (Figures.Direction).
type Owner string

// The owners of figures; a process's figure's name is the owner, "_" and
// its Process key ("client_recv_calls_per_2mib").
const (
	OfSide     Owner = ""
	OfClient   Owner = "client"
	OfServer   Owner = "server"
	OfReceiver Owner = "receiver"
	OfSender   Owner = "sender"
)

// SummaryPart is where run's summary table shows an entry: the rows of
// the side before the processes', the processes' rows (paired by
// FigureEntry.Group), the side's rows after, or none.
type SummaryPart int

// The parts of run's summary table.
const (
	SummaryNone SummaryPart = iota
	SummaryHead
	SummaryProcess
	SummaryTail
)

// FigureEntry is one figure of the table.
type FigureEntry struct {
	// Key is the JSON key of the field it reads: of Figures for OfSide,
	// of Process for the others. Name() is the CSV column.
	Key string
	Of  Owner
	// Short is its word in a line or a legend ("recv"); Long its row in
	// a table ("client recv calls/2MiB"), owner included.
	Short, Long string
	Unit        string // "calls/2MiB", "B/s", "%", "bytes", "s", "cores", "s/GiB", "ms"
	Format      FigureFormat
	// Ratio: a B/A or run-to-run ratio of it means something (a share of
	// time or CPU seconds that depend on the run's length do not).
	Ratio bool
	// Unknown is the kind of reason it is n/a for where that is always
	// the same (a Reason of no parameters, worded by phrase); "" where the
	// span's warnings and reasons say (the fill, a shared server).
	Unknown ReasonKind
	Summary SummaryPart
	// NoCSV keeps it out of the CSV, whose columns scripts read by
	// position too: a figure only a line or the panel shows.
	NoCSV bool
	// Group pairs a process's figures in the summary: the client's rows
	// of a group, then the server's (recv and send EAGAIN together).
	Group string
	// Get reads the figure from a span.
	Get func(f *Figures) Figure
}

// Name is the entry's CSV column and the name tests and docs use for it.
func (e FigureEntry) Name() string {
	if e.Of == OfSide {
		return e.Key
	}
	return string(e.Of) + "_" + e.Key
}

// processFigure is one figure every process has, before it is made an
// entry per owner.
type processFigure struct {
	key, short, long, unit string
	format                 FigureFormat
	ratio                  bool
	group                  string
	get                    func(p *Process) Figure
}

// processFigures are a process's figures, in the CSV's order.
var processFigures = []processFigure{
	{"recv_calls_per_2mib", "recv", "recv calls/2MiB", "calls/2MiB", FormatFixed1, true, "recv", func(p *Process) Figure { return p.RecvCallsPer2MiB }},
	{"send_calls_per_2mib", "send", "send calls/2MiB", "calls/2MiB", FormatFixed1, true, "send", func(p *Process) Figure { return p.SendCallsPer2MiB }},
	{"recv_eagain_per_2mib", "recv EAGAIN", "recv EAGAIN/2MiB", "calls/2MiB", FormatFixed1, true, "eagain", func(p *Process) Figure { return p.RecvEAGAINPer2MiB }},
	{"send_eagain_per_2mib", "send EAGAIN", "send EAGAIN/2MiB", "calls/2MiB", FormatFixed1, true, "eagain", func(p *Process) Figure { return p.SendEAGAINPer2MiB }},
	{"voluntary_cs_per_2mib", "wake", "wake-ups/2MiB (vol)", "switches/2MiB", FormatFixed1, true, "wake", func(p *Process) Figure { return p.VolCSPer2MiB }},
	{"involuntary_cs_per_2mib", "preempt", "wake-ups/2MiB (invol)", "switches/2MiB", FormatFixed1, true, "wake", func(p *Process) Figure { return p.InvolCSPer2MiB }},
	{"minor_faults_per_2mib", "faults", "page faults/2MiB", "faults/2MiB", FormatFixed1, true, "faults", func(p *Process) Figure { return p.FaultsPer2MiB }},
	{"user_s", "user", "user s", "s", FormatFixed2, false, "cpu s", func(p *Process) Figure { return p.UserS }},
	{"sys_s", "sys", "sys s", "s", FormatFixed2, false, "cpu s", func(p *Process) Figure { return p.SysS }},
	{"cores_busy", "cpu", "cores busy", "cores", FormatFixed2, true, "cores", func(p *Process) Figure { return p.CoresBusy }},
	{"cpu_s_per_gib", "cpu/GiB", "CPU s/GiB", "s/GiB", FormatFixed3, true, "cpu/GiB", func(p *Process) Figure { return p.CPUSPerGiB }},
	{"cores_on_cpu", "on cpu", "cores on a CPU", "cores", FormatFixed2, true, "sched", func(p *Process) Figure { return p.CoresOnCPU }},
	{"cores_waiting_for_cpu", "wait", "cores waiting for CPU", "cores", FormatFixed2, true, "sched", func(p *Process) Figure { return p.CoresWaiting }},
	{"lead_thread_waiting_for_cpu", "lead wait", "busiest thread CPU wait", "share", FormatFixed2, true, "sched", func(p *Process) Figure { return p.LeadWaiting }},
	{"cores_asleep", "asleep", "cores asleep", "cores", FormatFixed2, false, "sched", func(p *Process) Figure { return p.CoresAsleep }},
	{"wait_for_cpu_s_per_2mib", "wait/2MiB", "wait for CPU ms/2MiB", "s/2MiB", FormatMs3, true, "wait", func(p *Process) Figure { return p.WaitSPer2MiB }},
}

// A server figure is unknown where nbdscope sees no server process (an
// external --target that is not a local process it may look at); a
// receiver's or sender's where the bulk data changed direction within the
// span, so that no one process received it.
const (
	whyServerUnknown = ReasonNotLocal
	whyFlowUnknown   = ReasonReceiverChanged
)

// processEntries are the entries of every process figure for one owner.
func processEntries(of Owner, why ReasonKind, part SummaryPart) []FigureEntry {
	out := make([]FigureEntry, len(processFigures))
	for i, pf := range processFigures {
		get := pf.get
		out[i] = FigureEntry{Key: pf.key, Of: of, Short: pf.short, Long: string(of) + " " + pf.long,
			Unit: pf.unit, Format: pf.format, Ratio: pf.ratio, Unknown: why, Summary: part, Group: pf.group,
			Get: func(f *Figures) Figure { return figureOf(f.process(string(of)), get) }}
	}
	return out
}

// spanFigure is an entry of the side, read from the span.
func spanFigure(key, short, long, unit string, format FigureFormat, ratio bool, part SummaryPart, get func(f *Figures) Figure) FigureEntry {
	return FigureEntry{Key: key, Of: OfSide, Short: short, Long: long, Unit: unit, Format: format,
		Ratio: ratio, Summary: part, Get: get}
}

// flowFigure is a receiver's or sender's entry: a process figure of
// whichever process the span's direction names.
func flowFigure(of Owner, key, short, long string, get func(f *Figures) Figure) FigureEntry {
	return FigureEntry{Key: key, Of: of, Short: short, Long: long, Unit: "calls/2MiB", Format: FormatFixed1,
		Ratio: true, Unknown: whyFlowUnknown, Get: get}
}

// Names of the entries the printers pick one by one (a line, a chart);
// a test checks each is in the table.
const (
	FigThroughput    = "throughput_bps"
	FigReceiverCalls = "receiver_recv_calls_per_2mib"
	FigReceiverAgain = "receiver_recv_eagain_per_2mib"
	FigSenderCalls   = "sender_send_calls_per_2mib"
	FigSenderAgain   = "sender_send_eagain_per_2mib"
	FigClientPerGiB  = "client_cpu_s_per_gib"
	FigServerPerGiB  = "server_cpu_s_per_gib"
	FigClientFaults  = "client_minor_faults_per_2mib"
	FigServerFaults  = "server_minor_faults_per_2mib"
	FigClientCores   = "client_cores_busy"
	FigServerCores   = "server_cores_busy"
	FigClientWake    = "client_voluntary_cs_per_2mib"
	FigServerWake    = "server_voluntary_cs_per_2mib"
	FigClientWait    = "client_cores_waiting_for_cpu"
	FigServerWait    = "server_cores_waiting_for_cpu"
	FigFullPct       = "sndbuf_full_pct"
	FigEmptyPct      = "sndbuf_empty_pct"
	FigP50           = "latency_p50_ms"
	FigP99           = "latency_p99_ms"
)

// figureTable is the table, in the CSV's order.
var figureTable = func() []FigureEntry {
	t := []FigureEntry{
		spanFigure("throughput_bps", "rate", "throughput", "B/s", FormatRate, true, SummaryHead,
			func(f *Figures) Figure { return f.ThroughputBps }),
		flowFigure(OfReceiver, "recv_calls_per_2mib", "recv", "receiver recv calls/2MiB", (*Figures).ReceiverCallsPer2MiB),
		flowFigure(OfSender, "send_calls_per_2mib", "send", "sender send calls/2MiB", (*Figures).SenderCallsPer2MiB),
		flowFigure(OfSender, "send_eagain_per_2mib", "EAGAIN", "sender send EAGAIN/2MiB", (*Figures).SenderEAGAINPer2MiB),
	}
	again := flowFigure(OfReceiver, "recv_eagain_per_2mib", "EAGAIN", "receiver recv EAGAIN/2MiB", (*Figures).ReceiverEAGAINPer2MiB)
	again.NoCSV = true // --intervals' EAGAIN, never a CSV column
	t = append(t, again)
	t = append(t, processEntries(OfClient, "", SummaryProcess)...)
	t = append(t, processEntries(OfServer, whyServerUnknown, SummaryProcess)...)
	t = append(t,
		spanFigure("latency_p50_ms", "p50", "latency p50 ms", "ms", FormatFixed2, true, SummaryTail,
			func(f *Figures) Figure { return f.LatencyP50Ms }),
		spanFigure("latency_p99_ms", "p99", "latency p99 ms", "ms", FormatFixed2, true, SummaryTail,
			func(f *Figures) Figure { return f.LatencyP99Ms }),
		spanFigure("latency_max_ms", "max", "latency max ms", "ms", FormatFixed2, true, SummaryTail,
			func(f *Figures) Figure { return f.LatencyMaxMs }),
		spanFigure("sndbuf_full_pct", "full", "send buffer full %", "%", FormatFixed1, false, SummaryHead,
			func(f *Figures) Figure { return f.Fill().FullPct }),
		spanFigure("sndbuf_empty_pct", "empty", "send buffer empty %", "%", FormatFixed1, false, SummaryHead,
			func(f *Figures) Figure { return f.Fill().EmptyPct }),
		spanFigure("sndbuf_fill_bytes", "fill", "send buffer fill bytes", "bytes", FormatBytes, false, SummaryHead,
			func(f *Figures) Figure { return f.Fill().Bytes }),
	)
	return t
}()

// FigureTable is the table of figures, in the CSV's order: every span
// figure, and every process figure once per owner.
func FigureTable() []FigureEntry { return append([]FigureEntry(nil), figureTable...) }

// LookupFigure finds an entry by its name ("client_cores_busy").
func LookupFigure(name string) (FigureEntry, bool) {
	for _, e := range figureTable {
		if e.Name() == name {
			return e, true
		}
	}
	return FigureEntry{}, false
}

// FigureOf is the entry of a name the code spells (the Fig… constants);
// for a name not in the table, an entry that is always unknown, so that a
// printer shows n/a where a test (TestFigNamesAreInTheTable) fails.
func FigureOf(name string) FigureEntry {
	if e, ok := LookupFigure(name); ok {
		return e
	}
	return FigureEntry{Key: name, Short: name, Long: name, Get: func(*Figures) Figure { return Unknown }}
}

// SummaryFigures are the entries of run's summary table, in its order:
// the side's head rows, then for each group of process figures the
// client's rows and the server's, then the side's tail rows.
func SummaryFigures() []FigureEntry {
	var head, tail []FigureEntry
	var groups []string
	byGroup := map[string][]FigureEntry{}
	for _, e := range figureTable {
		switch e.Summary {
		case SummaryHead:
			head = append(head, e)
		case SummaryTail:
			tail = append(tail, e)
		case SummaryProcess:
			if _, ok := byGroup[e.Group]; !ok {
				groups = append(groups, e.Group)
			}
			byGroup[e.Group] = append(byGroup[e.Group], e)
		}
	}
	out := head
	for _, g := range groups {
		out = append(out, byGroup[g]...)
	}
	return append(out, tail...)
}
