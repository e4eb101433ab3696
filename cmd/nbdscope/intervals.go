package main

import (
	"fmt"
	"io"

	"nbdscope/model"
	"nbdscope/report"
)

// intervalPrinter writes the interval lines of a run.
type intervalPrinter struct {
	w        io.Writer
	interval float64                  // seconds: the span of a side's first sample
	prevT    map[model.SideID]float64 // side → end of its last sample
	began    bool
}

func newIntervalPrinter(w io.Writer, interval model.Duration) *intervalPrinter {
	return &intervalPrinter{w: w, interval: interval.D().Seconds(), prevT: map[model.SideID]float64{}}
}

// update prints the line of a sample or an event.
func (p *intervalPrinter) update(u model.Update) {
	if !p.began && (u.Sample != nil || u.Event != nil) {
		fmt.Fprintln(p.w, report.IntervalLegend)
		p.began = true
	}
	switch {
	case u.Sample != nil:
		s := u.Sample
		from, seen := p.prevT[s.Side]
		if !seen {
			from = max(0, s.T-p.interval)
		}
		p.prevT[s.Side] = s.T
		fmt.Fprintln(p.w, report.IntervalLine(from, *s))
	case u.Event != nil:
		fmt.Fprintln(p.w, report.EventIntervalLine(*u.Event))
	}
}
