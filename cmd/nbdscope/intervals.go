package main

import (
	"fmt"
	"io"

	"nbdscope/model"
	"nbdscope/report"
)

// intervalPrinter writes the interval lines of a run: a side's samples
// folded into lines of a second (report.IntervalFolder), or of an
// interval when -i asked for one.
type intervalPrinter struct {
	w     io.Writer
	fold  *report.IntervalFolder
	began bool
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
	return &intervalPrinter{w: w, fold: report.NewIntervalFolder(width, interval.D().Seconds())}
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
		lines = p.fold.Sample(*u.Sample)
	case u.Event != nil:
		lines = append(p.fold.Flush(u.Event.Side), report.EventIntervalLine(*u.Event))
	case u.Done != nil:
		lines = p.fold.Flush(model.WholePair)
	}
	for _, l := range lines {
		fmt.Fprintln(p.w, l)
	}
}
