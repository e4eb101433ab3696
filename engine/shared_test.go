package engine

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"nbdscope/engine/meter"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// sharedPair is two sides whose --target is one process (PID 42), each
// with a sample behind it (load and server counters at zero).
func sharedPair() (*Pair, *side, *side) {
	sc := model.DefaultSide("A")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	p := &Pair{}
	for i := range p.sides {
		p.sides[i] = &side{name: sc.Name, id: model.SideAt(i), p: p, cfg: sc,
			load: &child{}, server: &child{attached: true, realPID: 42, realCmd: "qemu-nbd"}}
	}
	p.sides[0].meter.Begin(meter.Reading{At: time.Unix(0, 0)}, model.Stamp{})
	return p, p.sides[0], p.sides[1]
}

// sideAt is a read of side s: its load's active clock and its server
// child's send calls (each side's server child counts the process from
// its own start, so the two sides' counts differ).
func sideAt(s *side, activeNs int64, sends uint64, ran bool) sideRead {
	return sideRead{ok: true, ld: s.load, srv: s.server, ran: ran,
		lm: wire.Msg{ActiveNs: activeNs, Bytes: uint64(activeNs) << 2},
		sm: wire.Msg{Counters: model.Counters{IO: nbd.IOStats{SendCalls: sends}}}}
}

// measure is a sample of side s at the replies lm and sm, wall seconds
// after its last reading.
func (s *side) measure(t, wall float64, lm, sm wire.Msg, hasServer, shared bool, fill model.Fill) model.Sample {
	r := readingOf(s.meter.Last().At.Add(time.Duration(wall*1e9)), lm, sm)
	return s.meter.Sample(r, s.span(t, r, hasServer, shared, fill))
}

// serverSends are a sample's server send calls, 0 where not attributed.
func serverSends(smp model.Sample) uint64 {
	if smp.Server == nil {
		return 0
	}
	return smp.Server.SendCalls
}

// keptSpan says what of a shared server's span the side kept after its
// sample smp, by the sample after it: its load ran 1 ms more, its
// server made no call and the other side's load did not run, so that
// sample's server calls are 0, and known ("": nothing kept).
func keptSpan(s *side, smp model.Sample) string {
	last := s.meter.Last()
	lm := wire.Msg{ActiveNs: last.Load.ActiveNs + 1e6, Bytes: last.Load.Bytes + 1<<20}
	sm := wire.Msg{Counters: last.Server.Counters}
	next := s.measure(smp.T+0.25, 0.25, lm, sm, true, true, model.Fill{})
	if next.Server == nil || next.Server.SendCalls != 0 {
		return fmt.Sprintf("the next sample's server %+v (n/a: %+v)", next.Server, next.ServerNA)
	}
	return ""
}

// A sample spanning a switch of turns is split at the read taken between
// the outgoing load's pause and the incoming one's resume (a cut): the
// process's calls before it are A's, those after it B's, and neither
// side's sample is left unattributed, where without the cut both were
// (both loads ran in them). Where the cut is not clean, the sample stays
// n/a: the outgoing load still ran after it (a pause that did not drain),
// or the cut's read of A failed (it may have run).
func TestSharedTargetCutAtTurnSwitch(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cut          bool  // a cut was read
		cutFailed    bool  // A's read at the cut failed
		aAfter       int64 // ns A's load ran after the cut
		wantA, wantB uint64
		na           bool // both samples' server figures are n/a
	}{
		{"cut between the loads", true, false, 0, 800, 200, false},
		{"no cut", false, false, 0, 0, 0, true},
		{"the outgoing load ran on after the cut", true, false, 10e6, 0, 0, true},
		{"the cut's read of A failed", true, true, 0, 0, 0, true},
	} {
		p, a, b := sharedPair()
		// A ran 200 ms up to the cut, in which the process made 800
		// sends (by A's server child; by B's, which counts from earlier,
		// 3000 to 3800); then B ran 50 ms, in which it made 200 more.
		b.meter.Begin(meter.Reading{At: time.Unix(0, 0), Server: meter.Server{Counters: model.Counters{IO: nbd.IOStats{SendCalls: 3000}}}}, model.Stamp{})
		if tc.cut {
			reads := [2]sideRead{sideAt(a, 200e6, 800, true), sideAt(b, 0, 3800, false)}
			if tc.cutFailed {
				reads[0] = sideRead{ran: true}
			}
			p.noteOthersRan(reads)
			for i, s := range p.sides {
				if reads[i].ok {
					s.cut(reads[i])
				}
			}
		}
		aRan := !tc.cut || tc.cutFailed || tc.aAfter > 0 // since A's last read
		ra, rb := sideAt(a, 200e6+tc.aAfter, 1000, aRan), sideAt(b, 50e6, 4000, true)
		p.noteOthersRan([2]sideRead{ra, rb})
		smps := [2]model.Sample{
			a.measure(1, 0.25, ra.lm, ra.sm, true, true, model.Fill{}),
			b.measure(1, 0.25, rb.lm, rb.sm, true, true, model.Fill{}),
		}
		for i, want := range []uint64{tc.wantA, tc.wantB} {
			s, smp := p.sides[i], smps[i]
			if got := serverSends(smp); got != want {
				t.Errorf("%s: side %d's server send calls %d, want %d", tc.name, i, got, want)
			}
			if na := smp.Server == nil; na != tc.na || na != (smp.ServerUnattributed == 1) || na != (smp.ServerNA != nil) {
				t.Errorf("%s: side %d's sample server %+v, unattributed %d, %+v: want n/a %v", tc.name, i, smp.Server, smp.ServerUnattributed, smp.ServerNA, tc.na)
			}
			if next := keptSpan(s, smp); next != "" {
				t.Errorf("%s: side %d keeps a span after its sample: %s", tc.name, i, next)
			}
		}
	}
}

// A switch of turns reads the shared server (turns.cut) after the
// outgoing load's pause has answered and before the incoming one is
// resumed; a decision that resumes nothing
// (both paused) or pauses nothing (concurrent mode) takes no cut.
func TestTurnSwitchCutsBetweenPauseAndResume(t *testing.T) {
	var mu sync.Mutex
	var said []string
	note := func(s string) { mu.Lock(); defer mu.Unlock(); said = append(said, s) }
	loadOf := func(name string) *child {
		return fakeChild(t, model.RoleLoad, name, func(c wire.Cmd) wire.Msg {
			verb := " resumed"
			if c.Int != 0 {
				verb = " paused"
			}
			note(name + verb)
			return wire.Msg{Type: "reply"}
		})
	}
	a := &side{idx: 0, name: "A", load: loadOf("A")}
	b := &side{idx: 1, name: "B", load: loadOf("B")}
	tr := newTurns(model.ModeConcurrent, 100*time.Millisecond, [2]*side{a, b}, func(*side, model.WarningParams) {})
	tr.cut = func() { note("cut") }
	check := func(step string, want ...string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(said, want) {
			t.Errorf("%s: %q, want %q", step, said, want)
		}
		said = nil
	}
	tr.apply(true)
	check("concurrent", "A resumed", "B resumed")
	tr.setMode(model.ModeAlternate)
	check("alternate, A's turn", "B paused", "cut", "A resumed")
	tr.give(1)
	check("B's turn", "A paused", "cut", "B resumed")
	tr.setPaused(0, true)
	tr.setPaused(1, true)
	check("both paused", "A paused", "cut", "B resumed", "A paused", "B paused")
}
