package main

import (
	"fmt"
	"io"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/platform"
	"nbdscope/report"
)

// intervalPrinter writes the interval lines of a run: a side's samples
// folded into lines of a second (report.IntervalFolder), or of an
// interval when -i asked for one.
type intervalPrinter struct {
	w     io.Writer
	fold  *report.IntervalFolder
	began bool
	facts platform.Facts
	macOS map[model.SideID]bool // the sides whose macOS mark is printed
}

// intervalLineSeconds is the span of a line when -i was not given:
// iperf3's one second.
const intervalLineSeconds = 1.0

// newIntervalPrinter prints lines of a second, or of each sample's
// interval when perSample (-i given).
func newIntervalPrinter(w io.Writer, interval model.Duration, perSample bool) *intervalPrinter {
	width := intervalLineSeconds
	if perSample {
		width = 0
	}
	return &intervalPrinter{w: w, fold: report.NewIntervalFolder(width, interval.D().Seconds()),
		facts: platform.Probe(), macOS: map[model.SideID]bool{}}
}

// macOSLine is the macOS mark, the first time a side's samples show its
// send buffer at macOS's 8 KiB off a Mac: its lines' B/A would otherwise
// read as macOS's until the summary's first line says it is not; "" else.
func (p *intervalPrinter) macOSLine(s model.Sample) string {
	macos := model.Buf{Kind: model.BufMacOS}.String()
	if p.macOS[s.Side] || s.SndBuf.ServerRequested != macos && s.SndBuf.ClientRequested != macos {
		return ""
	}
	p.macOS[s.Side] = true
	if e := model.MacOSEmulationFor(p.facts, s.Settings.Workload, s.Side); e != nil {
		return "▲ " + phrase.MacOSEmulation(*e)
	}
	return ""
}

// update prints the lines a sample completes, an event's line after its
// side's lines before it, and the last lines at the end.
func (p *intervalPrinter) update(u model.Update) {
	if !p.began && (u.Sample != nil || u.Event != nil) {
		fmt.Fprintln(p.w, report.IntervalLegend)
		p.began = true
	}
	var lines []string
	switch {
	case u.Sample != nil:
		if l := p.macOSLine(*u.Sample); l != "" {
			lines = append(lines, l)
		}
		lines = append(lines, p.fold.Sample(*u.Sample)...)
	case u.Event != nil:
		lines = append(p.fold.Flush(u.Event.Side), report.EventIntervalLine(*u.Event))
	case u.Done != nil:
		lines = p.fold.Flush(model.WholePair)
	}
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
}
