package report

import (
	"fmt"

	"nbdscope/model"
	"nbdscope/phrase"
)

// The lines of run --intervals: one per side per interval, as iperf3
// prints them, and one when a change takes effect.

// run --intervals prints a line per side per interval as the run goes, as
// iperf3 does, and a line when a change takes effect; the summary table
// follows at the end:
//
//	[B]  3.00-3.25 s  3.21 GiB/s  recv 13.5/2MiB  EAGAIN 7.4  cpu 0.97/0.96  wait 0.02/0.31  sndbuf 2m (4m)
//	[B]  5.02 s       sndbuf 2m → 64k
//
// It is not the default on a pipe: what run writes to stdout is the same
// wherever stdout goes (the summary table), so a script reading it today
// keeps working and a command line tried on a terminal gives the same
// text in a pipe; --intervals asks for the lines, --json-stream for them
// as JSON.

// IntervalLegend explains the lines' short words, once, before them.
const IntervalLegend = "intervals: recv = receive calls per 2 MiB and EAGAIN = receive calls that found no data per 2 MiB, of the process receiving the data; cpu = client/server cores busy; wait = client/server cores waiting on a run queue for a CPU (n/a: not measured here); the data sender's send buffer (effective)"

// intervalSpan is "[B]  3.00-4.00 s", padded so the figures line up.
func intervalSpan(side string, span string) string {
	return fmt.Sprintf("[%s] %-15s", side, span)
}

// IntervalLine is a sample's line.
func IntervalLine(from float64, s model.Sample) string {
	head := intervalSpan(string(s.Side), fmt.Sprintf("%5.2f-%.2f s", from, s.T))
	if !s.Active {
		return head + "  idle (paused, or not its turn)"
	}
	line := head + "  " + intervalFigures(&s.Figures) + "  " + senderBuffer(s.Figures)
	if s.Warming {
		line += "  warming up"
	}
	if s.Changed {
		line += "  (a change took effect in it)"
	}
	return line
}

// intervalFigures are a line's figures, entries of the table of figures
// with their short labels and formats: "3.21 GiB/s  recv 13.5/2MiB
// EAGAIN 7.4  cpu 0.97/0.96" (the client's cores busy, then the server's).
func intervalFigures(f *model.Figures) string {
	val := func(name string) string { e := model.FigureOf(name); return formatOf(e.Format)(e.Get(f)) }
	short := func(name string) string { return model.FigureOf(name).Short }
	return fmt.Sprintf("%s  %s %s/2MiB  %s %s  %s %s/%s  %s %s/%s", val(model.FigThroughput),
		short(model.FigReceiverCalls), val(model.FigReceiverCalls), short(model.FigReceiverAgain), val(model.FigReceiverAgain),
		short(model.FigClientCores), val(model.FigClientCores), val(model.FigServerCores),
		short(model.FigClientWait), val(model.FigClientWait), val(model.FigServerWait))
}

// senderBuffer is the send buffer of the process that sends the bulk
// data, as requested (effective): "sndbuf 2m (4m)", "client-sndbuf 1m".
func senderBuffer(f model.Figures) string {
	if f.Direction() == model.FlowWrite {
		return model.SetClientSndBuf + " " + bufText(f.SndBuf.ClientRequested, f.SndBuf.ClientEffective)
	}
	req := f.SndBuf.ServerRequested
	if req == "" {
		req = f.Settings.SndBuf
	}
	return model.SetSndBuf + " " + bufText(req, f.SndBuf.ServerEffective)
}

// EventIntervalLine is the line of a change that took effect.
func EventIntervalLine(e model.Event) string {
	side := string(e.Side)
	if e.Side == model.WholePair {
		side = "pair"
	}
	return fmt.Sprintf("%s  %s", intervalSpan(side, fmt.Sprintf("%5.2f s", e.T)), phrase.EventLong(e))
}
