package model

import (
	"time"

	"nbdscope/clientrun"
	"nbdscope/nbd"
)

// What a sweep is: its spec, its rows and its report (sweep.Sweep and
// sweep.ExecSweep run one). A saved run holds a sweep's report
// (Report.Sweep).

// SweepSpec is a buffer-size sweep: for each server send buffer, move
// Bytes of payload (after a warm-up; rounded up to whole requests, and at
// least one round of them: sweep.SweepRound) Repeat times and keep the median.
type SweepSpec struct {
	Sizes  []Buf `json:"sizes"`
	Bytes  int64 `json:"bytes"`
	Repeat int   `json:"repeat"`
	// Setting is what is swept: SetSndBuf (server), SetClientSndBuf or
	// SetClientRcvBuf.
	Setting string `json:"setting,omitempty"`
	// Exec, when set, sweeps a real client command instead of our load:
	// Bytes is then the export's size (sweep.ExecSweep).
	Exec *ExecSpec `json:"exec,omitempty"`
}

// DefaultSweepSetting is the buffer a sweep goes through unless told: the
// server's send buffer (the seed's read tables).
const DefaultSweepSetting = SetSndBuf

// DefaultSweepSizes are the sizes of the published tables.
var DefaultSweepSizes = []string{"default", "64k", "128k", "256k", "512k", "1m", "2m", "4m"}

// SweepVersion is the schema version of SweepReport (sweep --json).
// Version 2 split CPU time into client and server and added EAGAIN per
// 2 MiB and the optimum; version 3 replaced the optimum's noise with its
// verdict (Welch's test, the ratios' intervals), and an exec run's
// client_calls_na and fill_na are reason objects (model.Reason), where
// they were sentences. Reading any version judges the optimum again from
// the rows' measurements (OptimumOf); a sentence reads as a text reason.
const SweepVersion = 3

// SweepRow is one buffer size's median result, in the seed's table shape:
// the time to move the bytes, client and server CPU seconds, the bulk-data
// receiver's recv calls and EAGAIN per 2 MiB, and the throughput.
type SweepRow struct {
	Buffer        string    `json:"buffer"`
	Effective     int       `json:"effective"`
	Seconds       float64   `json:"seconds"` // wall time of the measurement's bytes: first request sent … last reply taken
	ClientUserS   float64   `json:"client_user_s"`
	ClientSysS    float64   `json:"client_sys_s"`
	ServerUserS   Figure    `json:"server_user_s"` // unknown for an external target
	ServerSysS    Figure    `json:"server_sys_s"`
	ThroughputBps Figure    `json:"throughput_bps"`
	RecvPer2MiB   Figure    `json:"recv_calls_per_2mib"` // receiver of the bulk data
	EAGAINPer2MiB Figure    `json:"eagain_per_2mib"`     // the same receiver's EAGAIN returns
	Repeats       int       `json:"repeats"`
	Placement     Placement `json:"placement"` // where the side's processes ran
	// OtherCoresBusy is what other processes kept busy meanwhile, in
	// cores on average (the worst of the row's measurements); nil where
	// not measured (Report.OtherCoresBusy says how).
	OtherCoresBusy *Figure `json:"other_cores_busy,omitempty"`
	// Figures are the measurement's figures, over exactly what it moved
	// (Bytes: the sweep's bytes rounded up to whole requests; Seconds the
	// same as the row's): every figure of a run, with the same
	// definitions and CSV columns.
	Figures Figures `json:"figures"`
	// Exec is set in an exec sweep: the client's runs, min–max, and the
	// server's own figures (sweep.ExecSweep).
	Exec *ExecRow `json:"exec,omitempty"`
	// SweepSpread is every measurement, and the summary of their times
	// (sweep_stats.go).
	SweepSpread
}

// SweepReport is a whole sweep: what sweep prints as a table, JSON, CSV or
// markdown, all from these fields.
type SweepReport struct {
	Version  int           `json:"version"`
	Nbdscope string        `json:"nbdscope_version"`
	Time     time.Time     `json:"time"`
	Spec     SweepSpec     `json:"spec"`
	Config   Config        `json:"config"`
	Rows     []SweepRow    `json:"rows"`
	Optimum  *SweepOptimum `json:"optimum"` // null when no row has a throughput
	// Partial is set when the sweep stopped early (interrupted or a
	// measurement failed): Rows holds the sizes that finished.
	Partial       bool   `json:"partial,omitempty"`
	PartialReason string `json:"partial_reason,omitempty"`
	// ControllerCoresBusy is the CPU nbdscope's own process spent over
	// the whole sweep (starting and stopping pairs, sampling, polling), in
	// cores busy on average; nil where not measured.
	ControllerCoresBusy *Figure `json:"controller_cores_busy,omitempty"`
	// MacOS marks a sweep with a macos row off a Mac: that row is this
	// kernel with an 8 KiB buffer, not XNU (MacOSEmulationSwept); nil
	// otherwise.
	MacOS *MacOSEmulation `json:"macos_emulation,omitempty"`
}

// SweepOptimum is the fastest buffer size and those close to it
// (OptimumOf), and whether it is told apart from the others (Verdict).
type SweepOptimum struct {
	// Buffer is the fastest size: by the mean of its measurements, or its
	// row's throughput where they are not kept. Named the optimum only
	// when Verdict.Kind is OptimumClear.
	Buffer        string `json:"buffer"`
	ThroughputBps Figure `json:"throughput_bps"`
	// VsDefault is the optimum's throughput over the "default" row's;
	// unknown when the default was not swept.
	VsDefault Figure `json:"vs_default"`
	// Within5Pct are the sizes within 5% of the optimum's throughput
	// (the optimum included), in sweep order: any of them is as good.
	Within5Pct []string `json:"within_5pct"`
	// Pace is what set the pace of the optimum's measurement (PaceOf);
	// nil in a sweep saved before it was kept.
	Pace *Pace `json:"pace,omitempty"`
	// Verdict is whether the fastest size is told apart from the others
	// beyond noise (optimum.go): what every output names, or "none clear".
	Verdict OptimumVerdict `json:"verdict"`
}

// BufDefaultName is the text of the OS-default buffer (Buf.String).
const BufDefaultName = "default"

// An exec sweep measures a real client (qemu-img, nbdcopy, blksum) instead
// of our load process (sweep.ExecSweep runs it).

// ExecSpec is the client command of an exec sweep.
type ExecSpec struct {
	// Command is the command line; {uri}, {socket} and {size} (the
	// export's size in bytes) are replaced in it.
	Command string `json:"command"`
	Shell   bool   `json:"shell,omitempty"` // run through /bin/sh -c
	Warmup  int    `json:"warmup"`          // unmeasured runs before each size's repeats
	// Needs, when set, is an option the command's program must list in its
	// --help (nbdcopy's --blkhash); without it Fallback runs instead, and
	// the report says so (Note).
	Needs    string `json:"needs,omitempty"`
	Fallback string `json:"fallback,omitempty"`
	Note     string `json:"note,omitempty"` // set when the fallback ran
	// Seed is the case of the qemu-devel series' tables this sweep
	// reproduces ("qemu-img read", package seed), set by the built-in
	// presets that run the series' commands: the sweep's table then
	// prints the series' own rows beside ours.
	Seed string `json:"seed,omitempty"`
}

// ExecRun is one measured run of the client.
type ExecRun struct {
	clientrun.Result
	// Server is the server child's counters over the run (its data
	// sockets' calls, EAGAIN and bytes; its CPU), Payload the READ and
	// WRITE data it moved.
	Server  Counters    `json:"server"`
	Payload nbd.Payload `json:"payload"`
	// ClientCalls are the client's socket calls over the run, counted
	// from its exec (realproc); nil where they cannot be counted, and
	// then CallsNA says why.
	ClientCalls *nbd.IOStats `json:"client_calls,omitempty"`
	CallsNA     *Reason      `json:"client_calls_na,omitempty"`
	// ClientSched is where the client's threads' time went while it ran,
	// read from outside until it exits (sweep's execSched); its Span 0:
	// not measured.
	ClientSched Sched `json:"client_sched"`
	// PayloadAssumed: the server is a real one whose bytes cannot be
	// counted, so Payload is the export moved once (sweep's
	// assumedPayload).
	PayloadAssumed bool `json:"payload_assumed,omitempty"`
	// OtherCoresBusy is what other processes kept busy during the run,
	// in cores on average: the machine's busy CPU less the client's, the
	// server's and this process's; nil where not measured.
	OtherCoresBusy *Figure `json:"other_cores_busy,omitempty"`
	// Fill is the bulk sender's send-buffer fill while the client ran
	// (measured from outside; in the row's figures); FillNA says why it
	// is not known; FillSource what measured it (FillSourceKernel,
	// FillSourceEvents or FillSourceSampler, "" when not known or in
	// sweeps saved before).
	Fill       Fill    `json:"-"`
	FillNA     *Reason `json:"fill_na,omitempty"`
	FillSource string  `json:"fill_source,omitempty"`
}

// ExecRow is what an exec sweep adds to a size's row: the runs and the
// spread of the seed's columns. The row's Figures are those of the median
// run (by time): the server's from its own counts, the client's CPU and
// wake-ups from wait4 (its calls are not ours to count: unknown).
type ExecRow struct {
	Runs        []ExecRun `json:"runs"`
	SecondsMin  float64   `json:"seconds_min"`
	SecondsMax  float64   `json:"seconds_max"`
	UserMin     float64   `json:"user_s_min"`
	UserMax     float64   `json:"user_s_max"`
	SysMin      float64   `json:"sys_s_min"`
	SysMax      float64   `json:"sys_s_max"`
	ServerSentB uint64    `json:"server_sent_bytes"` // median run: all bytes on the server's data socket
}

// OptimumTolerance is how close to the best throughput a size counts as
// just as good: the 5% of SweepOptimum.Within5Pct.
const OptimumTolerance = 0.05

// OtherCPU is how busy other processes kept the machine during a sweep's
// measurements: the most of any row, and the rows they slowed (from
// OtherCoresNoisy); measured is false when no row measured it.
func OtherCPU(rows []SweepRow) (worst Figure, noisy []string, measured bool) {
	for _, r := range rows {
		if o := r.OtherCoresBusy; o != nil && o.Known() {
			measured = true
			worst = max(worst, *o)
			if *o >= OtherCoresNoisy {
				noisy = append(noisy, r.Buffer)
			}
		}
	}
	return worst, noisy, measured
}
