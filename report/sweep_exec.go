package report

import (
	"fmt"
	"io"
	"strconv"

	"nbdscope/model"
	"nbdscope/units"
)

// The outputs of an exec sweep (sweep --exec): the seed's table of a real
// client, `| buffer size | time | user | system |` with min–max, then the
// server's own columns; the optimum as the seed wrote it. The bars and
// the JSON are the sweep's own (sweep.go).

// spread is "4.292s (4.101–4.388)": the median with min–max.
func spread(med, lo, hi float64) string {
	return fmt.Sprintf("%.3fs (%.3f–%.3f)", med, lo, hi)
}

// execTable prints the seed's table for an exec sweep.
func execTable(w io.Writer, rep model.SweepReport) {
	x := rep.Spec.Exec
	median, perRow := medianOf(rep, "runs")
	fmt.Fprintf(w, "Running `%s` against %s (%s export) for each server send buffer, %s (min–max) after %d warm-up.\n",
		x.Command, execServerName(rep.Config.Sides[0]), units.FormatSize(rep.Spec.Bytes), median, x.Warmup)
	if x.Note != "" {
		fmt.Fprintf(w, "Note: %s.\n", x.Note)
	}
	fmt.Fprintln(w, "Time is wall time; user and system are the client's whole process tree (wait4); server figures are its own counts; the client's socket calls are counted from its exec (per process by bpf, at the socket layer, where allowed, else per thread by perf; nbdscope doctor says which).")
	if payloadAssumed(rep) {
		fmt.Fprintln(w, "The server is a real one: its calls are counted, its bytes cannot be on a unix socket, so each run is taken to move the whole export once (per 2 MiB figures and GiB/s use that).")
	}
	if why := callsNAOf(rep); why != "" {
		fmt.Fprintf(w, "The client's socket calls are n/a: %s.\n", why)
	}
	if len(rep.Rows) > 0 {
		fmt.Fprintln(w, execPlacementLine(rep.Rows[0].Figures.Placement))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| buffer size | time | user | system | server send calls per 2 MiB | server EAGAIN per 2 MiB | server recv calls per 2 MiB | server CPU | server sent | client recv calls per 2 MiB | client EAGAIN per 2 MiB | client wake-ups per 2 MiB | client page faults per 2 MiB | "+rateName()+" |"+
		execSpreadHead+measuredHead(perRow))
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"+execSpreadRule+measuredRule(perRow))
	for _, r := range rep.Rows {
		e, srv := r.Exec, r.Figures.Server
		if e == nil || srv == nil {
			continue
		}
		cpu := model.Unknown
		if srv.UserS.Known() && srv.SysS.Known() {
			cpu = srv.UserS + srv.SysS
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s%s\n", rowBuffer(r),
			spread(r.Seconds, e.SecondsMin, e.SecondsMax), spread(r.ClientUserS, e.UserMin, e.UserMax),
			spread(r.ClientSysS, e.SysMin, e.SysMax), srv.SendCallsPer2MiB.Fixed(2), srv.SendEAGAINPer2MiB.Fixed(2),
			srv.RecvCallsPer2MiB.Fixed(2), secs(cpu), sentCell(e),
			r.Figures.Client.RecvCallsPer2MiB.Fixed(2), r.Figures.Client.EAGAINPer2MiB.Fixed(2),
			wakeups(r.Figures.Client.VolCSPer2MiB, r.Figures.Client.InvolCSPer2MiB), r.Figures.Client.FaultsPer2MiB.Fixed(1),
			rateNumber(r.ThroughputBps), " "+timeSpread(r)+" |", measuredCell(perRow, r, rep.Spec.Repeat))
	}
}

// execServerName is the server an exec sweep ran against.
func execServerName(sd model.SideConfig) string {
	if sd.Server != "" {
		return "`" + sd.Server + "`"
	}
	return "nbdscope's server (" + sd.Backend + " backend)"
}

// sentCell is the bytes the server sent, n/a for a real server (not
// counted: payloadAssumed).
func sentCell(e *model.ExecRow) string {
	for _, run := range e.Runs {
		if run.PayloadAssumed {
			return "n/a"
		}
	}
	return units.FormatBytes(float64(e.ServerSentB))
}

// payloadAssumed tells whether the sweep's payloads are the export's size
// (a real server), not counted.
func payloadAssumed(rep model.SweepReport) bool {
	return firstOfRuns(rep.Rows, func(run model.ExecRun) bool { return run.PayloadAssumed })
}

// callsNAOf is why an exec sweep's client calls were not counted, from
// its first run that says so; "" when they were.
func callsNAOf(rep model.SweepReport) string {
	return reasonText(firstOfRuns(rep.Rows, func(run model.ExecRun) *model.Reason { return run.CallsNA }))
}

// firstOfRuns is the first value of of that is not zero over the exec
// runs of rows, in order: the first reason a figure is n/a, or whether any
// run set a flag. It is the zero value when no run has one.
func firstOfRuns[T comparable](rows []model.SweepRow, of func(model.ExecRun) T) T {
	var none T
	for _, r := range rows {
		if r.Exec == nil {
			continue
		}
		for _, run := range r.Exec.Runs {
			if v := of(run); v != none {
				return v
			}
		}
	}
	return none
}

// execPlacementLine says where the client and the server ran, since on a
// small machine that decides how much the buffer matters (--placement).
func execPlacementLine(pl model.Placement) string {
	if pl.Setting == model.PlaceOS || pl.LoadCPUs == "any" {
		return "Placement os: the scheduler placed the client and the server."
	}
	return fmt.Sprintf("Placement %s: the client and all it started held to CPU %s, the server to CPU %s.", pl.Setting, pl.LoadCPUs, pl.ServerCPUs)
}

// wakeups is "voluntary + involuntary" context switches per 2 MiB.
func wakeups(v, iv model.Figure) string {
	return v.Fixed(1) + " + " + iv.Fixed(1)
}

// execCSVHeader and execCSVCells are the columns an exec sweep's CSV adds
// after the figures: the spread of the seed's columns and the command.
var execCSVHeader = []string{"seconds_min", "seconds_max", "user_s_min", "user_s_max", "sys_s_min", "sys_s_max",
	"server_sent_bytes", "command"}

func execCSVCells(rep model.SweepReport, r model.SweepRow) []string {
	e := r.Exec
	if e == nil {
		return make([]string, len(execCSVHeader))
	}
	return []string{ff(e.SecondsMin), ff(e.SecondsMax), ff(e.UserMin), ff(e.UserMax), ff(e.SysMin), ff(e.SysMax),
		strconv.FormatUint(e.ServerSentB, 10), rep.Spec.Exec.Command}
}

// execPayloadLine says when the client moved much less than the export,
// as a command that only asks the server (nbdinfo) or reads a header
// does: its time is then mostly its start-up and handshake, and a figure
// per 2 MiB is of that little (scaled up, below 2 MiB). "" when every
// size moved at least half the export, and when the payload was assumed
// (a real server's, not counted).
func execPayloadLine(rep model.SweepReport) string {
	if rep.Spec.Exec == nil || len(rep.Rows) == 0 || rep.Spec.Bytes <= 0 || payloadAssumed(rep) {
		return ""
	}
	least, most := rep.Rows[0].Figures.Bytes, rep.Rows[0].Figures.Bytes
	for _, r := range rep.Rows {
		least, most = min(least, r.Figures.Bytes), max(most, r.Figures.Bytes)
	}
	export := uint64(rep.Spec.Bytes)
	if least >= export/2 {
		return ""
	}
	moved := units.FormatBytes(float64(least))
	if most != least {
		moved += " to " + units.FormatBytes(float64(most))
	}
	what := "its time includes what it does besides moving data (start-up, handshake), and each figure per 2 MiB is of that part"
	if most < 2<<20 {
		what = "its time is mostly what it does besides moving data (start-up, handshake), and each figure per 2 MiB is scaled up from less than 2 MiB"
	}
	return fmt.Sprintf("▲ payload: the client moved %s a run, %s of the %s export: %s; a command that moves the export, "+
		"such as 'nbdcopy {uri} null:', measures the data path", moved, share(least, export), units.FormatBytes(float64(export)), what)
}

// share is part of whole as a percentage, with three significant digits
// below 1% ("0.0122%"), where "0%" would say it moved nothing.
func share(part, whole uint64) string {
	p := float64(part) / float64(whole) * 100
	if p > 0 && p < 1 {
		return units.ThreeSig(p) + "%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}
