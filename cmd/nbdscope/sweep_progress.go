package main

import (
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"nbdscope/report"
	"nbdscope/sweep"
)

// sweepProgress shows where a sweep is on stderr, after each measurement:
// "[3/8] 256k repeat 2/3 · 2.41 GiB/s · ETA 1m20s", as a plain line per
// measurement when stderr is not a terminal, or redrawn in place after a
// progress bar when it is.
type sweepProgress struct {
	w     io.Writer
	tty   bool
	now   func() time.Time
	start time.Time
	bar   progress.Model
	drawn bool
}

func newSweepProgress(w io.Writer, tty bool, now func() time.Time) *sweepProgress {
	return &sweepProgress{w: w, tty: tty, now: now, start: now(),
		bar: progress.New(progress.WithDefaultGradient(), progress.WithWidth(24), progress.WithoutPercentage())}
}

// line is the progress text for p.
func (s *sweepProgress) line(p sweep.SweepProgress) string {
	eta := "ETA n/a"
	if p.Done > 0 {
		per := s.now().Sub(s.start) / time.Duration(p.Done)
		eta = "ETA " + (per * time.Duration(p.Total-p.Done)).Round(time.Second).String()
	}
	return fmt.Sprintf("[%d/%d] %s repeat %d/%d · %s %s · %s", p.SizeIndex, p.Sizes, p.Size, p.Repeat, p.Repeats,
		report.RateNumber(p.Last.ThroughputBps), report.RateName(), eta)
}

func (s *sweepProgress) update(p sweep.SweepProgress) {
	if !s.tty {
		fmt.Fprintln(s.w, s.line(p))
		return
	}
	frac := float64(p.Done) / float64(max(p.Total, 1))
	fmt.Fprintf(s.w, "\r\033[K%s %s", s.bar.ViewAs(frac), s.line(p))
	s.drawn = true
}

// finish clears the in-place line.
func (s *sweepProgress) finish() {
	if s.tty && s.drawn {
		fmt.Fprint(s.w, "\r\033[K")
	}
}
