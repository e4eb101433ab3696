package syscount

import (
	"fmt"
	"math"
	"testing"

	"nbdscope/internal/testbin"
)

// TestFillMeterLoads: the fill programs load here, the timer's and the
// exact ones, and their self-check (the level and limit they read are
// SIOCOUTQ's and SO_SNDBUF's) passes.
func TestFillMeterLoads(t *testing.T) {
	for name, open := range map[string]func() (*FillMeter, error){"timer": OpenFillMeter, "events": OpenFillEvents} {
		m, err := open()
		if err != nil {
			testbin.Require(t, fmt.Errorf("the %s fill programs cannot load here: %w\n%s", name, err, VerifierLog(err, 20)))
			return
		}
		m.Close()
	}
}

// TestFillMeterAttaches: the programs hang on raw tracepoints here, and
// through perf events where those cannot be had, each way passing the
// self-check.
func TestFillMeterAttaches(t *testing.T) {
	defer func() { fillPerfOnly = false }()
	for _, perfOnly := range []bool{false, true} {
		fillPerfOnly = perfOnly
		m, err := OpenFillEvents()
		if err != nil {
			testbin.Require(t, fmt.Errorf("the fill programs cannot load here: %w", err))
			return
		}
		tm, err := openFillTimer()
		if err != nil {
			testbin.Require(t, fmt.Errorf("the fill timer cannot load here: %w", err))
			return
		}
		for _, h := range append(m.back.(*fillEventsMeter).hooks, tm.find...) {
			if perf := h.event >= 0; perf != perfOnly {
				t.Errorf("perf events only %v: a program hung through a perf event %v", perfOnly, perf)
			}
		}
		m.Close()
		tm.close()
	}
}

// TestFillSumsHoldTheLastLevel: a window's sums are the kernel's plus the
// level of the last change held until the Take, so a sender blocked on a
// full buffer (no change for a while) counts as full for that time, and
// a window's figures are shares of time.
func TestFillSumsHoldTheLastLevel(t *testing.T) {
	const limit = 1000
	// 3 s measured: 1 s at 950 bytes (full), 2 s at 50 (empty), and the
	// last change left 950, 1 s before the Take.
	st := fillStats{LastNS: 10e9, LastLevel: 950<<32 | limit, TotalNS: 3e9, BytesNS: 950*1e9 + 50*2e9, FullNS: 1e9, EmptyNS: 2e9, Events: 7}
	s := sumsAt(st, 11e9)
	w := FillWindow{Sockets: 1, Limit: limit}.from(s, 950)
	want := FillWindow{Sockets: 1, Events: 7, Seconds: 4, FullPct: 50, EmptyPct: 50, MeanBytes: (950*2 + 50*2) / 4.0, Limit: limit, LastBytes: 950}
	if w != want {
		t.Errorf("window %+v, want %+v", w, want)
	}
	// A window since an earlier Take is the difference.
	d := sumsAt(st, 11e9).minus(sumsAt(st, 10.5e9))
	if math.Abs(d.total-0.5e9) > 1 || math.Abs(d.full-0.5e9) > 1 || d.empty != 0 {
		t.Errorf("half a second later: %+v, want 0.5 s all full", d)
	}
	// No change yet: nothing measured, not 0% full.
	if w := (FillWindow{Sockets: 1}).from(sumsAt(fillStats{}, 11e9), 0); w.OK() {
		t.Errorf("a socket without a change measured %+v", w)
	}
}
