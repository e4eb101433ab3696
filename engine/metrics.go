package engine

import (
	"encoding/json"
	"math"
	"strconv"

	"nbdscope/nbd"
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
}

// Sub returns the counters accumulated between o and c.
func (c Counters) Sub(o Counters) Counters {
	return Counters{IO: c.IO.Sub(o.IO), UserS: c.UserS - o.UserS, SysS: c.SysS - o.SysS}
}

// Process holds the figures of one process (a server or a load process)
// over an interval or a whole run.
type Process struct {
	RecvCallsPer2MiB Figure `json:"recv_calls_per_2mib"`
	SendCallsPer2MiB Figure `json:"send_calls_per_2mib"`
	EAGAINPer2MiB    Figure `json:"eagain_per_2mib"`
	RecvCalls        uint64 `json:"recv_calls"`
	SendCalls        uint64 `json:"send_calls"`
	EAGAIN           uint64 `json:"eagain"`
	UserS            Figure `json:"user_s"`
	SysS             Figure `json:"sys_s"`
	CoresBusy        Figure `json:"cores_busy"`
	CPUSPerGiB       Figure `json:"cpu_s_per_gib"`
}

// ProcessFigures derives a process's figures from its counter delta, the
// payload moved in that time and the wall-clock seconds.
func ProcessFigures(d Counters, payload uint64, wall float64) Process {
	cpu := d.UserS + d.SysS
	eagain := d.IO.RecvEAGAIN + d.IO.SendEAGAIN
	return Process{
		RecvCallsPer2MiB: CallsPer2MiB(d.IO.RecvCalls, payload),
		SendCallsPer2MiB: CallsPer2MiB(d.IO.SendCalls, payload),
		EAGAINPer2MiB:    CallsPer2MiB(eagain, payload),
		RecvCalls:        d.IO.RecvCalls,
		SendCalls:        d.IO.SendCalls,
		EAGAIN:           eagain,
		UserS:            Figure(d.UserS),
		SysS:             Figure(d.SysS),
		CoresBusy:        CoresBusy(cpu, wall),
		CPUSPerGiB:       CPUPerGiB(cpu, payload),
	}
}

// Buffers are the requested and effective socket buffers of a side's data
// sockets. Requested is the setting's text ("default", "2m", "macos");
// effective is what getsockopt reports (0 when unknown, e.g. for the server
// of an external target).
type Buffers struct {
	ServerRequested    string `json:"server_requested"`
	ServerEffective    int    `json:"server_effective"`
	ClientRequested    string `json:"client_requested"`
	ClientEffective    int    `json:"client_effective"`
	ClientRcvRequested string `json:"client_rcv_requested"`
	ClientRcvEffective int    `json:"client_rcv_effective"`
	// Clamped is set when the kernel gave the server's send buffer less
	// than the request should give (platform.CheckClamp).
	Clamped bool `json:"clamped,omitempty"`
}

// Placement is where a side's processes ran: the setting and the CPUs
// each was held to ("any" when not held; the server's is "n/a" for an
// external target).
type Placement struct {
	Setting    string `json:"setting"`
	LoadCPUs   string `json:"load_cpus"`
	ServerCPUs string `json:"server_cpus"`
}

// Sample is one interval of one side.
type Sample struct {
	T             float64   `json:"t"` // seconds since the run started
	Side          string    `json:"side"`
	Active        bool      `json:"active"` // the load ran for ≥ 1/4 of the interval (not paused or off-turn)
	Seconds       float64   `json:"seconds"`
	Bytes         uint64    `json:"bytes"`
	ThroughputBps Figure    `json:"throughput_bps"`
	Client        Process   `json:"client"`
	Server        *Process  `json:"server"` // nil for an external target
	SndBuf        Buffers   `json:"sndbuf"`
	Placement     Placement `json:"placement"`
	LatencyP50Ms  Figure    `json:"latency_p50_ms"`
	LatencyP99Ms  Figure    `json:"latency_p99_ms"`
	Connections   int       `json:"connections"`
	Errors        uint64    `json:"errors"`
	// RootDigest is set on the sample in which a hashed pass over the
	// export completed: that pass's root digest (consume hash).
	RootDigest string `json:"root_digest,omitempty"`
}

// ReceiverCallsPer2MiB is the headline figure: receive calls of the process
// that receives the bulk data — the client for reads, the server for writes.
func (s Sample) ReceiverCallsPer2MiB(workload string) Figure {
	if isWriteWorkload(workload) {
		if s.Server == nil {
			return Unknown
		}
		return s.Server.RecvCallsPer2MiB
	}
	return s.Client.RecvCallsPer2MiB
}

func isWriteWorkload(w string) bool { return w == WorkWrite || w == WorkRandWrite }

// Event is a change of a setting, recorded at the time it took effect.
type Event struct {
	T       float64 `json:"t"`
	Side    string  `json:"side"`
	Setting string  `json:"setting"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	// Reconnected: the side's connections were re-opened to apply the
	// change (a TCP buffer back to the OS default: Linux keeps a buffer
	// that was set locked, without autotuning, until the socket closes).
	Reconnected bool `json:"reconnected,omitempty"`
}

// Summary is a side over a whole run (active time only).
type Summary struct {
	Bytes         uint64    `json:"bytes"`
	Seconds       float64   `json:"seconds"`
	ThroughputBps Figure    `json:"throughput_bps"`
	Client        Process   `json:"client"`
	Server        *Process  `json:"server"`
	SndBuf        Buffers   `json:"sndbuf"`
	Placement     Placement `json:"placement"`
	LatencyP50Ms  Figure    `json:"latency_p50_ms"`
	LatencyP99Ms  Figure    `json:"latency_p99_ms"`
	Errors        uint64    `json:"errors"`
	// Consume is the side's consume mode at the end of the run; Consumed
	// what the modes found over it (zero buffers, hashed blocks, the root
	// digest of the last full pass).
	Consume  string        `json:"consume"`
	Consumed ConsumeCounts `json:"consumed"`
}
