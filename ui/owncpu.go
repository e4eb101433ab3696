package ui

import (
	"fmt"
	"time"
)

// ownWindow is the span over which the header's own CPU is measured, as
// top's refresh: long enough that one frame's work does not make it jump.
const ownWindow = 2 * time.Second

// ownMeter turns the controller's CPU readings (Controller.OwnCPU) into
// its share of one core over the last ownWindow of the run's clock.
type ownMeter struct {
	at, cpu time.Duration // the window's start
	started bool
	shown   string // "0.6%"; "n/a" when it cannot be read; "" until measured
}

// read takes a reading at elapsed; it reports whether the figure shown
// changed.
func (o *ownMeter) read(elapsed, cpu time.Duration, ok bool) bool {
	prev := o.shown
	switch {
	case !ok:
		o.shown, o.started = "n/a", false
	case !o.started || elapsed < o.at:
		o.at, o.cpu, o.started = elapsed, cpu, true
	case elapsed-o.at >= ownWindow:
		o.shown = ownShare(float64(cpu-o.cpu) / float64(elapsed-o.at))
		o.at, o.cpu = elapsed, cpu
	}
	return o.shown != prev
}

// ownShare prints a share of a core as a percentage: one decimal below
// 10%, where the ≤ 1% this is held to lives.
func ownShare(cores float64) string {
	pct := 100 * max(cores, 0)
	if pct < 10 {
		return fmt.Sprintf("%.1f%%", pct)
	}
	return fmt.Sprintf("%.0f%%", pct)
}
