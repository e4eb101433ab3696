package engine

import (
	"testing"
	"time"

	"nbdscope/model"
)

// TestScriptedNoOpWarns: a scripted change to the value already in force
// (B starts at 2m, --at 0.5s:b.sndbuf=2m) is marked a no-op in its event
// and warned of, where it was reported as a change "2m → 2m" like any other.
// A real change beside it is neither. A pair setting's (A's pause, the
// mode) is marked and warned of too: it was dropped without a word.
func TestScriptedNoOpWarns(t *testing.T) {
	cfg := testConfig() // B at 2m, the default pair's
	cfg.Duration = model.Duration(1500 * time.Millisecond)
	cfg.Script = []model.Change{parseAt(t, "0.5s:b.sndbuf=2m"), parseAt(t, "0.7s:a.sndbuf=128k"),
		parseAt(t, "0.9s:a.paused=false"), parseAt(t, "1s:a.mode=concurrent")}
	p := startPair(t, cfg)
	var evs, pairEvs []model.Event
	var warns []model.Warning
	for u := range p.Updates() {
		if u.Event != nil && u.Event.Setting == model.SetSndBuf {
			evs = append(evs, *u.Event)
		}
		if u.Event != nil && (u.Event.Setting == model.SetPaused || u.Event.Setting == model.SetMode) {
			pairEvs = append(pairEvs, *u.Event)
		}
		if u.Warning != nil && u.Warning.Kind == model.WarnNoOp {
			warns = append(warns, *u.Warning)
		}
	}
	if len(evs) != 2 {
		t.Fatalf("events %+v, want B's and A's", evs)
	}
	if b := evs[0]; b.Side != "B" || !b.NoOp || b.From != "2m" || b.To != "2m" {
		t.Errorf("B's change to the 2m it had: %+v, want marked no_op", b)
	}
	if a := evs[1]; a.Side != "A" || a.NoOp {
		t.Errorf("A's change to 128k: %+v, want no no_op mark", a)
	}
	want := []model.Warning{
		model.Warn("B", model.NoOpChange{Setting: model.SetSndBuf, Value: "2m"}),
		model.Warn("A", model.NoOpChange{Setting: model.SetPaused, Value: "false"}),
		model.Warn(model.WholePair, model.NoOpChange{Setting: model.SetMode, Value: "concurrent"}),
	}
	if len(warns) != len(want) {
		t.Fatalf("no-op warnings %+v, want B's sndbuf's, A's pause's and the mode's", warns)
	}
	for i, w := range want {
		if got := warns[i]; got.Side != w.Side || got.What != w.What {
			t.Errorf("no-op warning %d: %s %+v, want %s %+v", i, got.Side, got.What, w.Side, w.What)
		}
	}
	if len(pairEvs) != 2 || !pairEvs[0].NoOp || !pairEvs[1].NoOp {
		t.Errorf("events of the pause and the mode: %+v, want both marked no_op", pairEvs)
	}
}
