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
	fmt.Fprintf(w, "Running `%s` against nbdscope's server (%s backend, %s export) for each server send buffer, %s (min–max) after %d warm-up.\n",
		x.Command, rep.Config.Sides[0].Backend, units.FormatSize(rep.Spec.Bytes), median, x.Warmup)
	if x.Note != "" {
		fmt.Fprintf(w, "Note: %s.\n", x.Note)
	}
	fmt.Fprintln(w, "Time is wall time; user and system are the client's whole process tree (wait4); server figures are its own counts.")
	if len(rep.Rows) > 0 {
		fmt.Fprintln(w, execPlacementLine(rep.Rows[0].Figures.Placement))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| buffer size | time | user | system | server send calls per 2 MiB | server EAGAIN per 2 MiB | server recv calls per 2 MiB | server CPU | server sent | client wake-ups per 2 MiB | client page faults per 2 MiB | "+rateName()+" |"+
		execSpreadHead+measuredHead(perRow))
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"+execSpreadRule+measuredRule(perRow))
	for _, r := range rep.Rows {
		e, srv := r.Exec, r.Figures.Server
		if e == nil || srv == nil {
			continue
		}
		cpu := model.Unknown
		if srv.UserS.Known() && srv.SysS.Known() {
			cpu = srv.UserS + srv.SysS
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s%s\n", rowBuffer(r),
			spread(r.Seconds, e.SecondsMin, e.SecondsMax), spread(r.ClientUserS, e.UserMin, e.UserMax),
			spread(r.ClientSysS, e.SysMin, e.SysMax), srv.SendCallsPer2MiB.Fixed(2), srv.SendEAGAINPer2MiB.Fixed(2),
			srv.RecvCallsPer2MiB.Fixed(2), secs(cpu), units.FormatBytes(float64(e.ServerSentB)),
			wakeups(r.Figures.Client.VolCSPer2MiB, r.Figures.Client.InvolCSPer2MiB), r.Figures.Client.FaultsPer2MiB.Fixed(1),
			rateNumber(r.ThroughputBps), " "+timeSpread(r)+" |", measuredCell(perRow, r, rep.Spec.Repeat))
	}
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
