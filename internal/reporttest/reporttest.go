// Package reporttest holds the reports that the tests of the store, the
// renderers and the commands share: one made-up two-side run, the same
// cut short by a crash, and a run saved with changes of settings.
package reporttest

import (
	_ "embed"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/platform"
	"nbdscope/sweep"
)

// Proc builds process figures; values have at most 6 significant digits,
// what a Figure keeps in JSON.
func Proc(recv, user, sys, cpuPerGiB float64) model.Process {
	return model.Process{
		RecvCallsPer2MiB: model.Figure(recv), SendCallsPer2MiB: 1, EAGAINPer2MiB: model.Unknown,
		RecvCalls: 1000, SendCalls: 100, EAGAIN: 0,
		UserS: model.Figure(user), SysS: model.Figure(sys), CoresBusy: 0.5, CPUSPerGiB: model.Figure(cpuPerGiB),
		// where the time went: not measured (a kernel without schedstat)
		CoresOnCPU: model.Unknown, CoresWaiting: model.Unknown, CoresAsleep: model.Unknown, WaitSPer2MiB: model.Unknown,
	}
}

// Report builds a two-side read report: A at 1.5e9 B/s with 10 recv
// calls per 2 MiB, B at 3e9 B/s with 1.25. Some figures are unknown, one
// sample has no server. Figures have at most 6 significant digits, what a
// Figure keeps in JSON.
func Report() model.Report {
	cfg := model.DefaultConfig()
	cfg.Duration = model.Duration(10 * time.Second)
	srvA, srvB := Proc(0.5, 0.25, 1.5, 0.2), Proc(0.5, 0.125, 0.75, 0.1)
	r := model.Report{
		Version:  model.ReportVersion,
		Nbdscope: "0.1.0-test",
		Time:     time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		Preset:   "linux-gap",
		Platform: platform.Facts{
			OS: "linux", Arch: "amd64", Kernel: "Linux 6.8.0", CPUModel: "Test CPU @ 3.00GHz", Cores: 2,
			UnixSndbufDefault: 212992, UnixRcvbufDefault: 212992, UnixSndbufMax: 425984,
			TCPSndbufDefault: 16384, TCPRcvbufDefault: 131072,
			Limits: map[string]int{"net.core.wmem_max": 212992}, Doubles: true,
		},
		Config: cfg,
		Sides: []model.SideReport{
			{Name: "A", Summary: model.Summary{Figures: model.Figures{
				Bytes: 15e9, Seconds: 10, ThroughputBps: 1.5e9,
				Client: Proc(10, 0.5, 3.25, 0.375), Server: &srvA,
				SndBuf:       model.Buffers{ServerRequested: "default", ServerEffective: 212992, ClientRequested: "default", ClientEffective: 212992},
				LatencyP50Ms: 1.5, LatencyP99Ms: model.Unknown,
			}}},
			{Name: "B", Summary: model.Summary{Figures: model.Figures{
				Bytes: 30e9, Seconds: 10, ThroughputBps: 3e9,
				Client: Proc(1.25, 0.25, 1.25, 0.0625), Server: &srvB,
				SndBuf:       model.Buffers{ServerRequested: "2m", ServerEffective: 4 << 20, ClientRequested: "default", ClientEffective: 212992},
				LatencyP50Ms: 0.75, LatencyP99Ms: 3,
			}}},
		},
		Events: []model.Event{
			{T: 0, Side: "B", Setting: "sndbuf", From: "default", To: "2m"},
			{T: 5.25, Side: "A", Setting: "connections", From: "1", To: "4"},
		},
		Warnings: []model.Warning{{T: 0.25, Side: "B", Kind: model.WarnClamp, Text: "SO_SNDBUF 2m clamped", Fix: "sudo sysctl -w net.core.wmem_max=2097152"}},
	}
	for i := 0; i < 4; i++ {
		sA, sB := Proc(0.5, 0.25, 1.5, 0.2), Proc(0.5, 0.125, 0.75, 0.1)
		r.Samples = append(r.Samples,
			model.Sample{T: float64(i) * 0.25, Side: "A", Active: true, Connections: 1, Figures: model.Figures{Seconds: 0.25, Bytes: 256 << 20,
				ThroughputBps: 1.5e9, Client: Proc(10, 0.125, 0.75, 0.375), Server: &sA,
				SndBuf: model.Buffers{ServerRequested: "default", ServerEffective: 212992}, LatencyP50Ms: 1.5, LatencyP99Ms: model.Unknown}},
			model.Sample{T: float64(i) * 0.25, Side: "B", Active: i%2 == 0, Connections: 1, Figures: model.Figures{Seconds: 0.25, Bytes: 640 << 20,
				ThroughputBps: model.Unknown, Client: Proc(1.25, 0.0625, 0.25, 0.0625), Server: &sB,
				SndBuf: model.Buffers{ServerRequested: "2m", ServerEffective: 4 << 20}, LatencyP50Ms: model.Unknown, LatencyP99Ms: 3}})
	}
	// A sample of an external target: no server figures.
	r.Samples = append(r.Samples, model.Sample{T: 1, Side: "A", Active: true, Figures: model.Figures{Seconds: 0.25, ThroughputBps: 5e8,
		Client: Proc(2, 0.125, 0.25, 0.5), LatencyP50Ms: model.Unknown, LatencyP99Ms: model.Unknown}})
	return r
}

// Partial is testReport with side A's load dead halfway.
func Partial() model.Report {
	r := Report()
	c := model.Crash{T: 2.5, Side: "A", Role: model.RoleLoad, Target: "nbd+unix:///?socket=/tmp/q.sock",
		Status: "exit status 1", Reason: "target nbd+unix:///?socket=/tmp/q.sock: connection lost: nbd: sending WRITE: write: broken pipe",
		Stderr: []string{"nbdscope: target nbd+unix:///?socket=/tmp/q.sock: connection lost: nbd: sending WRITE: write: broken pipe"}}
	r.Crashes = []model.Crash{c}
	r.Partial, r.PartialReason = true, c.Text()+"; interrupted after 3.0s of 10s"
	return r
}

//go:embed testdata/changes.json
var changesJSON []byte

// ChangesJSON is testdata/changes.json: a run file saved by
// 'nbdscope run --save' in which side A changed its client receive buffer
// (2 s), its transport (4 s) and its placement (6 s), and side B its send
// buffer and connections (6 s), as a user does in the explorer.
func ChangesJSON() []byte { return append([]byte(nil), changesJSON...) }

// Changes is the report of ChangesJSON.
func Changes(t *testing.T) model.Report { return reportOf(t, changesJSON) }

// reportOf is the report of a saved run file.
func reportOf(t *testing.T, runFile []byte) model.Report {
	t.Helper()
	var rf struct {
		Report model.Report `json:"report"`
	}
	if err := json.Unmarshal(runFile, &rf); err != nil {
		t.Fatal(err)
	}
	return rf.Report
}

//go:embed testdata/macos-write-old.json
var macOSWriteOldJSON []byte

// MacOSWriteOldJSON is testdata/macos-write-old.json: a run file saved by
// 'nbdscope run --preset macos-write -t 2 --save' (A's client send buffer
// at macOS's 8 KiB, B's at 2 MiB, both writing) whose macOS mark is in
// the shape of runs saved before write sides had the series' writing
// figure: no series_case, and the reading figure, 12.6x.
func MacOSWriteOldJSON() []byte { return append([]byte(nil), macOSWriteOldJSON...) }

// MacOSWriteOld is the report of MacOSWriteOldJSON, as read.
func MacOSWriteOld(t *testing.T) model.Report { return reportOf(t, macOSWriteOldJSON) }

//go:embed testdata/workload-changes.json
var workloadChangesJSON []byte

// WorkloadChanges is the report of testdata/workload-changes.json: a run
// file saved by 'nbdscope run -t 6 -i 0.5 --mode concurrent --at
// 2s:a.workload=write --at 4s:a.workload=read --save wl2', in which side
// A's bulk data went to its client, then its server, then its client
// again; B read throughout.
func WorkloadChanges(t *testing.T) model.Report { return reportOf(t, workloadChangesJSON) }

//go:embed testdata/noisy-sweep.json
var noisySweepJSON []byte

// NoisySweepJSON is testdata/noisy-sweep.json: a run file saved by
// 'nbdscope sweep --preset sweep --repeat 3 --bytes 512m --save oldsweep'
// on a shared 2-vCPU VM before the optimum was one verdict (sweep
// version 2, its optimum "noise" judged by the σ-overlap rule): 512k had
// the highest median (4.93 GiB/s) and 1m the highest mean, each size's
// three measurements spread by up to ±60%. runs list named "optimum 512k
// (1.12x)" while the sweep's own line said "none clear".
func NoisySweepJSON() []byte { return append([]byte(nil), noisySweepJSON...) }

// Cells splits a markdown table row into trimmed cells.
func Cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var out []string
	for _, c := range strings.Split(row, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// TableRow finds the row of a markdown table whose first cell is first,
// after the header that starts with header.
func TableRow(t *testing.T, md, header, first string) []string {
	t.Helper()
	in := false
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			in = false
			continue
		}
		c := Cells(l)
		if c[0] == header {
			in = true
			continue
		}
		if in && c[0] == first {
			return c
		}
	}
	t.Fatalf("no row %q in the table %q:\n%s", first, header, md)
	return nil
}

// Sweep is a sweep report with known figures.
func Sweep() model.SweepReport {
	row := func(buf string, eff int, gibps float64) model.SweepRow {
		r := model.SweepRow{Buffer: buf, Effective: eff, Seconds: 1 / gibps, ClientUserS: 0.1, ClientSysS: 0.2,
			ServerUserS: 0.05, ServerSysS: 0.3, ThroughputBps: model.Figure(gibps * model.GiB), RecvPer2MiB: 12.5,
			EAGAINPer2MiB: 3, Repeats: 3}
		r.Figures.Errors = new(uint64) // our load's requests are seen: none failed
		return r
	}
	rows := []model.SweepRow{row("default", 212992, 1.425), row("64k", 131072, 0.8), row("1m", 2097152, 3.42),
		row("2m", 4194304, 3.30), row("4m", 8388608, 3.25), row("8m", 16777216, 3.2)}
	cfg := model.DefaultConfig()
	spec := model.SweepSpec{Bytes: 1 << 30, Repeat: 3}
	return model.SweepReport{Version: model.SweepVersion, Spec: spec, Config: cfg, Rows: rows, Optimum: sweep.Optimum(rows)}
}
