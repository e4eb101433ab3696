package model

import (
	"encoding/json"
	"math"
	"strconv"

	"nbdscope/nbd"
	"nbdscope/units"
)

// This file holds the one definition of every figure nbdscope reports. The
// TUI, the JSON and CSV output, the tables and saved runs all use these.

// PayloadUnit is the payload amount per-unit figures refer to: syscalls
// "per 2 MiB" of payload, the request size of qemu-img's reads.
const PayloadUnit = 2 << 20

// GiB is 2^30 bytes; throughput and CPU per GiB use binary units.
const GiB = 1 << 30

// Figure is a measured number, or unknown (NaN) when it could not be
// measured. Unknown figures are written as null in JSON, never as a made-up
// value.
type Figure float64

// Unknown is the figure that could not be measured.
var Unknown = Figure(math.NaN())

// Known reports whether the figure was measured.
func (f Figure) Known() bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// MarshalJSON writes null for an unknown figure.
func (f Figure) MarshalJSON() ([]byte, error) {
	if !f.Known() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// NA is how a figure that could not be measured is printed: never 0.
const NA = "n/a"

// Sig prints the figure with about three significant digits, or n/a.
func (f Figure) Sig() string { return f.text(units.Sig) }

// Rate prints a throughput figure ("2.31 GiB/s"), or n/a.
func (f Figure) Rate() string { return f.text(units.FormatRate) }

// Fixed prints the figure with prec decimals, or n/a.
func (f Figure) Fixed(prec int) string {
	return f.text(func(v float64) string { return units.Fixed(v, prec) })
}

// Ratio prints the figure as a ratio ("2.40x"), or n/a.
func (f Figure) Ratio() string { return f.text(units.FormatRatio) }

func (f Figure) text(format func(float64) string) string {
	if !f.Known() {
		return NA
	}
	return format(float64(f))
}

// Ratio returns b/a, unknown when either is unknown or a is zero.
func Ratio(a, b Figure) Figure {
	if !a.Known() || !b.Known() || a == 0 {
		return Unknown
	}
	return b / a
}

// UnmarshalJSON reads null as unknown.
func (f *Figure) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Unknown
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Figure(v)
	return nil
}

// Throughput is payload bytes completed per second: READ data received, WRITE
// data acknowledged.
func Throughput(payloadBytes uint64, seconds float64) Figure {
	if seconds <= 0 {
		return Unknown
	}
	return Figure(float64(payloadBytes) / seconds)
}

// CallsPer2MiB is system calls divided by (payload bytes / 2 MiB).
func CallsPer2MiB(calls, payloadBytes uint64) Figure {
	if payloadBytes == 0 {
		return Unknown
	}
	return Figure(float64(calls) / (float64(payloadBytes) / PayloadUnit))
}

// CPUPerGiB is CPU seconds (user+system) per GiB of payload.
func CPUPerGiB(cpuSeconds float64, payloadBytes uint64) Figure {
	if payloadBytes == 0 {
		return Unknown
	}
	return Figure(cpuSeconds / (float64(payloadBytes) / GiB))
}

// CoresBusy is CPU seconds per second of load (1.0 = one core busy). In
// alternate mode the seconds are those the side's load ran.
func CoresBusy(cpuSeconds, wallSeconds float64) Figure {
	if wallSeconds <= 0 {
		return Unknown
	}
	return Figure(cpuSeconds / wallSeconds)
}

// Counters are the cumulative raw counters one process reports.
type Counters struct {
	IO    nbd.IOStats `json:"io"`
	UserS float64     `json:"user_s"` // getrusage(RUSAGE_SELF)
	SysS  float64     `json:"sys_s"`
	// VolCS and InvolCS are the process's voluntary and involuntary
	// context switches (getrusage ru_nvcsw, ru_nivcsw): a sleep that
	// waited for the socket, and a preemption.
	VolCS   uint64 `json:"nvcsw"`
	InvolCS uint64 `json:"nivcsw"`
	// MinFlt is the process's minor page faults (ru_minflt): a page
	// first touched. One per 4 KiB of a buffer that is faulted in afresh
	// for each request; where a fault costs 10 µs or more (a VM), that
	// sets the process's pace whatever the socket does.
	MinFlt uint64 `json:"minflt"`
	// Sched is where the process's threads' time went (probe/schedstat),
	// cumulative; its Span 0: not measured.
	Sched Sched `json:"sched"`
}

// Sched is where a process's threads' time went, in seconds summed over
// its threads: on a CPU, runnable and waiting on a run queue for one,
// and asleep (neither), over Span seconds of wall time (the interval its
// readings cover, counted once however many threads it has). Run + Wait
// + Sleep is its threads' wall time: Span times its threads.
type Sched struct {
	RunS   float64 `json:"run_s"`
	WaitS  float64 `json:"wait_s"`
	SleepS float64 `json:"sleep_s"`
	SpanS  float64 `json:"span_s"`
	// LeadRunS and LeadWaitS are the run and wait of the process's lead
	// thread, the one that ran the most (probe/schedstat's Times.LeadRun):
	// the contention rule's figure (Process.LeadWaiting). LeadRunS 0
	// where RunS is not: read before the lead was kept.
	LeadRunS  float64 `json:"lead_run_s,omitempty"`
	LeadWaitS float64 `json:"lead_wait_s,omitempty"`
}

// Sub returns the times between o and s.
func (s Sched) Sub(o Sched) Sched {
	return Sched{RunS: s.RunS - o.RunS, WaitS: s.WaitS - o.WaitS, SleepS: s.SleepS - o.SleepS, SpanS: s.SpanS - o.SpanS,
		LeadRunS: s.LeadRunS - o.LeadRunS, LeadWaitS: s.LeadWaitS - o.LeadWaitS}
}

// Add returns the field-wise sum.
func (s Sched) Add(o Sched) Sched {
	return Sched{RunS: s.RunS + o.RunS, WaitS: s.WaitS + o.WaitS, SleepS: s.SleepS + o.SleepS, SpanS: s.SpanS + o.SpanS,
		LeadRunS: s.LeadRunS + o.LeadRunS, LeadWaitS: s.LeadWaitS + o.LeadWaitS}
}

// ContendedShare is the share of a span a process waited on a run queue
// for a CPU (CoresWaiting) from which the CPUs count as contended: the
// pace verdict is then contention, not a wait on the other process. A
// process that waits a fifth of the time for a core loses about that
// much of its pace to others, more than the buffer's effect on a quiet
// machine; an unloaded machine's busiest threads wait 0-10%
// (Process.LeadWaiting, which the rule reads).
const ContendedShare = 0.20

// Sub returns the counters accumulated between o and c.
func (c Counters) Sub(o Counters) Counters {
	return Counters{IO: c.IO.Sub(o.IO), UserS: c.UserS - o.UserS, SysS: c.SysS - o.SysS,
		VolCS: c.VolCS - o.VolCS, InvolCS: c.InvolCS - o.InvolCS, MinFlt: c.MinFlt - o.MinFlt, Sched: c.Sched.Sub(o.Sched)}
}

// Add returns the field-wise sum.
func (c Counters) Add(o Counters) Counters {
	return Counters{IO: c.IO.Add(o.IO), UserS: c.UserS + o.UserS, SysS: c.SysS + o.SysS,
		VolCS: c.VolCS + o.VolCS, InvolCS: c.InvolCS + o.InvolCS, MinFlt: c.MinFlt + o.MinFlt, Sched: c.Sched.Add(o.Sched)}
}

// Process holds the figures of one process (a server or a load process)
// over an interval or a whole run. The counts are kept next to the
// per-2-MiB figures so that figures can be added (Figures.Add).
type Process struct {
	RecvCallsPer2MiB  Figure `json:"recv_calls_per_2mib"`
	SendCallsPer2MiB  Figure `json:"send_calls_per_2mib"`
	RecvEAGAINPer2MiB Figure `json:"recv_eagain_per_2mib"`
	SendEAGAINPer2MiB Figure `json:"send_eagain_per_2mib"`
	// EAGAINPer2MiB and EAGAIN are the sum of both directions, kept for
	// readers of report version 1; they go in the next version.
	EAGAINPer2MiB Figure `json:"eagain_per_2mib"`
	// Wake-ups: voluntary and involuntary context switches per 2 MiB.
	VolCSPer2MiB   Figure `json:"voluntary_cs_per_2mib"`
	InvolCSPer2MiB Figure `json:"involuntary_cs_per_2mib"`
	// FaultsPer2MiB is minor page faults per 2 MiB: 512 when every 4 KiB
	// of the payload lands in a page touched for the first time.
	FaultsPer2MiB Figure `json:"minor_faults_per_2mib"`
	RecvCalls     uint64 `json:"recv_calls"`
	SendCalls     uint64 `json:"send_calls"`
	RecvEAGAIN    uint64 `json:"recv_eagain"`
	SendEAGAIN    uint64 `json:"send_eagain"`
	EAGAIN        uint64 `json:"eagain"`
	VolCS         uint64 `json:"voluntary_cs"`
	InvolCS       uint64 `json:"involuntary_cs"`
	Faults        uint64 `json:"minor_faults"`
	UserS         Figure `json:"user_s"`
	SysS          Figure `json:"sys_s"`
	CoresBusy     Figure `json:"cores_busy"`
	CPUSPerGiB    Figure `json:"cpu_s_per_gib"`
	// Where the process's time went (Sched): its threads' seconds on a
	// CPU, waiting on a run queue for one, and asleep, per second of the
	// span; and its wait for a CPU per 2 MiB. Unknown where schedstat
	// is not read (macOS, a kernel without it).
	CoresOnCPU   Figure `json:"cores_on_cpu"`
	CoresWaiting Figure `json:"cores_waiting_for_cpu"`
	CoresAsleep  Figure `json:"cores_asleep"`
	WaitSPer2MiB Figure `json:"wait_for_cpu_s_per_2mib"`
	// LeadWaiting is the share of the span the process's lead thread
	// (the one doing its work: Sched.LeadRunS) waited for a CPU: what
	// the contention rule reads (Verdict.Contended), since the others'
	// waits are mostly behind that thread on the process's own core.
	// Unknown where schedstat is not read or the run was saved before.
	LeadWaiting Figure `json:"lead_thread_waiting_for_cpu"`
	Sched       Sched  `json:"sched"`
}

// UnmarshalJSON reads a process; a figure missing from the input (a run
// saved before it was measured) is unknown, never 0.
func (p *Process) UnmarshalJSON(b []byte) error {
	type plain Process
	v := plain{
		RecvCallsPer2MiB: Unknown, SendCallsPer2MiB: Unknown, RecvEAGAINPer2MiB: Unknown,
		SendEAGAINPer2MiB: Unknown, EAGAINPer2MiB: Unknown, VolCSPer2MiB: Unknown,
		InvolCSPer2MiB: Unknown, FaultsPer2MiB: Unknown, UserS: Unknown, SysS: Unknown, CoresBusy: Unknown, CPUSPerGiB: Unknown,
		CoresOnCPU: Unknown, CoresWaiting: Unknown, CoresAsleep: Unknown, WaitSPer2MiB: Unknown, LeadWaiting: Unknown,
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Process(v)
	return nil
}

// ProcessFigures derives a process's figures from its counter delta, the
// payload moved in that time and the wall-clock seconds.
func ProcessFigures(d Counters, payload uint64, wall float64) Process {
	cpu := d.UserS + d.SysS
	eagain := d.IO.RecvEAGAIN + d.IO.SendEAGAIN
	p := Process{
		RecvCallsPer2MiB:  CallsPer2MiB(d.IO.RecvCalls, payload),
		SendCallsPer2MiB:  CallsPer2MiB(d.IO.SendCalls, payload),
		RecvEAGAINPer2MiB: CallsPer2MiB(d.IO.RecvEAGAIN, payload),
		SendEAGAINPer2MiB: CallsPer2MiB(d.IO.SendEAGAIN, payload),
		EAGAINPer2MiB:     CallsPer2MiB(eagain, payload),
		VolCSPer2MiB:      CallsPer2MiB(d.VolCS, payload),
		InvolCSPer2MiB:    CallsPer2MiB(d.InvolCS, payload),
		FaultsPer2MiB:     CallsPer2MiB(d.MinFlt, payload),
		RecvCalls:         d.IO.RecvCalls,
		SendCalls:         d.IO.SendCalls,
		RecvEAGAIN:        d.IO.RecvEAGAIN,
		SendEAGAIN:        d.IO.SendEAGAIN,
		EAGAIN:            eagain,
		VolCS:             d.VolCS,
		InvolCS:           d.InvolCS,
		Faults:            d.MinFlt,
		UserS:             Figure(d.UserS),
		SysS:              Figure(d.SysS),
		CoresBusy:         CoresBusy(cpu, wall),
		CPUSPerGiB:        CPUPerGiB(cpu, payload),
	}
	p.setSched(d.Sched, payload)
	return p
}

// setSched sets the figures of where the time went from s, over its own
// span (the interval its readings cover): unknown where it has none.
func (p *Process) setSched(s Sched, payload uint64) {
	p.Sched = s
	p.CoresOnCPU, p.CoresWaiting, p.CoresAsleep, p.WaitSPer2MiB, p.LeadWaiting = Unknown, Unknown, Unknown, Unknown, Unknown
	if s.SpanS <= 0 {
		return
	}
	p.CoresOnCPU, p.CoresWaiting, p.CoresAsleep = CoresBusy(s.RunS, s.SpanS), CoresBusy(s.WaitS, s.SpanS), CoresBusy(s.SleepS, s.SpanS)
	if s.LeadRunS > 0 || s.RunS <= 0 {
		p.LeadWaiting = CoresBusy(s.LeadWaitS, s.SpanS)
	}
	if payload > 0 {
		p.WaitSPer2MiB = Figure(s.WaitS / (float64(payload) / PayloadUnit))
	}
}

// Counters are the raw counts a process's figures were derived from (no
// byte counts: the figures do not keep them).
func (p Process) Counters() Counters {
	return Counters{
		IO:    nbd.IOStats{RecvCalls: p.RecvCalls, SendCalls: p.SendCalls, RecvEAGAIN: p.RecvEAGAIN, SendEAGAIN: p.SendEAGAIN},
		UserS: float64(p.UserS), SysS: float64(p.SysS), VolCS: p.VolCS, InvolCS: p.InvolCS, MinFlt: p.Faults,
		Sched: p.Sched,
	}
}

// Buffers are the requested and effective socket buffers of a side's data
// sockets. Requested is the setting's text ("default", "2m", "macos");
// effective is what getsockopt reports (0 when unknown, e.g. for the server
// of an external target).
type Buffers struct {
	ServerRequested string `json:"server_requested"`
	ServerEffective int    `json:"server_effective"`
	// ServerRcv… are the server's SO_RCVBUF (ServerRcvOwn: a real
	// server's own, as ServerOwn is its SO_SNDBUF's).
	ServerRcvRequested string `json:"server_rcv_requested,omitempty"`
	ServerRcvEffective int    `json:"server_rcv_effective,omitempty"`
	ServerRcvOwn       int    `json:"server_rcv_own,omitempty"`
	ClientRequested    string `json:"client_requested"`
	ClientEffective    int    `json:"client_effective"`
	ClientRcvRequested string `json:"client_rcv_requested"`
	ClientRcvEffective int    `json:"client_rcv_effective"`
	// ClientOwn and ClientRcvOwn (an exec side's real client): its
	// SO_SNDBUF and SO_RCVBUF as its data socket had them when first seen,
	// as ServerOwn is a real server's.
	ClientOwn    int `json:"client_own,omitempty"`
	ClientRcvOwn int `json:"client_rcv_own,omitempty"`
	// ServerOwn (a real server: a --server command, a local --target's
	// process) is the SO_SNDBUF its data socket had when nbdscope first
	// saw it, as getsockopt read it: the value the process set itself
	// (qemu-nbd 10.1+ asks for 2 MiB, read back as 4 MiB on Linux) or the
	// OS default it kept; a request of default restores it. 0: unknown, or
	// not a real server.
	ServerOwn int `json:"server_own,omitempty"`
	// Clamped is set when the kernel gave the server's send buffer less
	// than the request should give (platform.CheckClamp).
	Clamped bool `json:"clamped,omitempty"`
	// ServerRcvClamped, ClientClamped and ClientRcvClamped are the same
	// for the other buffers, judged where Clamped is (the engine), for a
	// size the user asked for; in process only (the explorer's rows).
	ServerRcvClamped, ClientClamped, ClientRcvClamped bool `json:"-"`
}

// Placement is where a side's processes ran: the setting and the CPUs
// each was held to ("any" when not held; the server's is "n/a" for an
// external target).
type Placement struct {
	Setting    Place  `json:"setting"`
	LoadCPUs   string `json:"load_cpus"`
	ServerCPUs string `json:"server_cpus"`
}
