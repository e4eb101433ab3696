package meter

import (
	"math"
	"testing"

	"nbdscope/model"
)

// schedAt is a reading s seconds into the run whose load's and server's
// threads ran, waited for a CPU and slept the given cumulative seconds,
// over s seconds of their readings' span: recorded from run -t 5 on a
// loaded 2-core machine (A's server: 1.87 s on a CPU, 1.91 s waiting,
// 41.0 s asleep over 5.01 s, its 8 threads' sums), in quarters.
func schedAt(s float64, bytes uint64) Reading {
	r := at(s, bytes, s, s*0.7, s*0.7, 0)
	q := s / 5
	r.Load.Counters.Sched = model.Sched{RunS: 1.92 * q, WaitS: 1.19 * q, SleepS: 42.10 * q, SpanS: s}
	r.Server.Counters.Sched = model.Sched{RunS: 1.87 * q, WaitS: 1.91 * q, SleepS: 41.03 * q, SpanS: s}
	return r
}

func near(a model.Figure, b float64) bool { return a.Known() && math.Abs(float64(a)-b) < 1e-9 }

// The three parts of where a process's time went carry from the
// readings through the one accumulator: each sample's, the turn's, the
// recent figures', the segment's and the run's are their seconds over
// the span their readings cover, and the wait per 2 MiB over the payload.
func TestSchedTimesCarryThroughTheMeter(t *testing.T) {
	var m Meter
	m.Begin(schedAt(0, 0), model.Stamp{SndBuf: "2m"})
	var last model.Sample
	for i := 1; i <= 20; i++ {
		s := 0.25 * float64(i)
		last = m.Sample(schedAt(s, uint64(i)*(256<<20)), span(s))
	}
	sum, _, _ := m.Summary(true, false, false)
	segs := m.Segments(false, false)
	check := func(what string, f model.Figures) {
		t.Helper()
		c, s := f.Client, f.Server
		if !near(c.CoresOnCPU, 1.92/5) || !near(c.CoresWaiting, 1.19/5) || !near(c.CoresAsleep, 42.10/5) {
			t.Errorf("%s: client on a CPU %v, waiting %v, asleep %v; want 0.384, 0.238, 8.42", what, c.CoresOnCPU, c.CoresWaiting, c.CoresAsleep)
		}
		if s == nil || !near(s.CoresOnCPU, 1.87/5) || !near(s.CoresWaiting, 1.91/5) || !near(s.CoresAsleep, 41.03/5) {
			t.Fatalf("%s: server %+v; want 0.374, 0.382, 8.21", what, s)
		}
		// 1.91 s of wait over 5 s at 1 GiB/s: 0.382 s per 1 GiB, 0.000746 s per 2 MiB.
		if !near(s.WaitSPer2MiB, 1.91/5/512) {
			t.Errorf("%s: server wait per 2 MiB %v, want %v", what, s.WaitSPer2MiB, 1.91/5/512)
		}
	}
	check("sample", last.Figures)
	check("turn", *last.Turn)
	check("recent", *last.Recent)
	check("summary", sum)
	check("segment", segs[0].Summary.Figures)
	if got := sum.Server.Sched; math.Abs(got.RunS+got.WaitS+got.SleepS-(1.87+1.91+41.03)) > 1e-9 || math.Abs(got.SpanS-5) > 1e-9 {
		t.Errorf("the run's server times %+v: want 44.81 s of its threads over 5 s", got)
	}
}

// Where schedstat is not read (macOS, a kernel without it), the readings
// carry no span: the figures are unknown, never 0.
func TestSchedTimesUnmeasuredAreUnknown(t *testing.T) {
	var m Meter
	m.Begin(at(0, 0, 0, 0, 0, 0), model.Stamp{})
	smp := m.Sample(at(0.25, 256<<20, 0.25, 0.2, 0.2, 100), span(0.25))
	sum, _, _ := m.Summary(true, false, false)
	for what, p := range map[string]model.Process{"sample client": smp.Client, "sample server": *smp.Server, "run client": sum.Client} {
		if p.CoresOnCPU.Known() || p.CoresWaiting.Known() || p.CoresAsleep.Known() || p.WaitSPer2MiB.Known() {
			t.Errorf("%s: unmeasured times read %v %v %v %v, want n/a", what, p.CoresOnCPU, p.CoresWaiting, p.CoresAsleep, p.WaitSPer2MiB)
		}
	}
}
