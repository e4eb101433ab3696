package engine

import (
	"testing"
	"time"

	"nbdscope/model"
)

// TestChangeHasWholeTurnsAround: in alternate mode a scripted change of B
// at 1.2 s, just after the slice would have given B its turn (A 0-1 s,
// B from 1 s), leaves B a whole turn of samples with bytes before it and a
// whole one after: the turn is held for B around the change. Left to the
// slice, B's "before" was the 1-2 samples of its turn's start, one of them
// the mixed first (a real server's B at 2.8 s for a change at 3 s had 0
// bytes before).
func TestChangeHasWholeTurnsAround(t *testing.T) {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	cfg.Duration = model.Duration(2600 * time.Millisecond)
	ch := parseAt(t, "1.2s:b.sndbuf=64k")
	cfg.Script = []model.Change{ch}
	slice := model.TurnLength(cfg.Interval.D())
	p := startPair(t, cfg)
	var ev *model.Event
	var before, after time.Duration
	var warns []model.Warning
	var bytesBefore, bytesAfter uint64
	for u := range p.Updates() {
		switch {
		case u.Event != nil && u.Event.Setting == model.SetSndBuf:
			ev = u.Event
		case u.Warning != nil && u.Warning.Kind == model.WarnSchedule:
			warns = append(warns, *u.Warning)
		case u.Sample != nil && u.Sample.Side == "B" && u.Sample.Active && !u.Sample.Changed:
			// The turn's time is counted whether or not the load got a
			// core in that sample (on a loaded machine a sample can move
			// nothing); that each segment has bytes is checked apart.
			d := time.Duration(u.Sample.Seconds * float64(time.Second))
			if u.Sample.Settings.SndBuf == "64k" {
				after += d
				bytesAfter += u.Sample.Bytes
			} else {
				before += d
				bytesBefore += u.Sample.Bytes
			}
		}
	}
	if ev == nil {
		t.Fatal("no event of B's change")
	}
	if len(warns) > 0 {
		t.Errorf("warned %+v for a change a turn from the start and the end", warns)
	}
	// A whole turn less a sample: the sample a turn begins in and the one
	// the change falls in are mixed.
	want := slice - 2*cfg.Interval.D()
	if before < want || after < want {
		t.Errorf("B's active time with bytes: %v before the change at %.2fs, %v after, want each at least %v", before, ev.T, after, want)
	}
	if bytesBefore == 0 || bytesAfter == 0 {
		t.Errorf("B moved %d bytes before the change and %d after, want some in each", bytesBefore, bytesAfter)
	}
	t.Logf("B: %v before the change at %.2fs, %v after", before, ev.T, after)
}

// TestPlanHolds: the turn is held for the changed side a slice and two
// samples before its change until a slice after; changes of one side near
// each other make one hold; a hold cut by the run's start or end or by
// the other side's is said.
func TestPlanHolds(t *testing.T) {
	const slice, iv = time.Second, 250 * time.Millisecond
	at := func(s string) model.Change { return parseAt(t, s) }
	holds, problems := planHolds([]model.Change{at("3s:b.sndbuf=2m"), at("0.5s:a.paused=true")}, slice, iv, 8*time.Second)
	if len(problems) > 0 || len(holds) != 1 || holds[0] != (hold{side: 1, from: 1500 * time.Millisecond, to: 4 * time.Second}) {
		t.Errorf("one change at 3 s: holds %+v, problems %+v; want B held 1.5-4 s, a pause not held", holds, problems)
	}
	if s, ok := heldBy(holds, 2*time.Second); !ok || s != 1 {
		t.Errorf("at 2 s the turn is %d (%v), want B's", s, ok)
	}
	if _, ok := heldBy(holds, 4*time.Second); ok {
		t.Error("the hold goes on past its end")
	}
	holds, _ = planHolds([]model.Change{at("3s:b.sndbuf=2m"), at("3.5s:b.sndbuf=64k")}, slice, iv, 8*time.Second)
	if len(holds) != 1 || holds[0].to != 4500*time.Millisecond {
		t.Errorf("two changes of B: holds %+v, want one to 4.5 s", holds)
	}
	for _, c := range []struct {
		script []model.Change
		word   string
	}{
		{[]model.Change{at("0.5s:b.sndbuf=2m")}, model.CutByStart},
		{[]model.Change{at("7.5s:b.sndbuf=2m")}, model.CutByEnd},
		{[]model.Change{at("3s:b.sndbuf=2m"), at("3.5s:a.sndbuf=64k")}, model.CutByOther},
	} {
		_, problems := planHolds(c.script, slice, iv, 8*time.Second)
		if len(problems) != 1 || problems[0].What.(model.TurnsNotWhole).Cut != c.word {
			t.Errorf("%v: problems %+v, want one cut by %q", c.script, problems, c.word)
		}
	}
}
