package syscount

import "testing"

// TestBothProgramSets: the raw programs (where this architecture has
// them) and the per-call ones both load, pass their self-check, and are
// what loadBPF picks.
func TestBothProgramSets(t *testing.T) {
	needBPF(t)
	tp, err := loadTracepoints()
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []bool{true, false} {
		if raw && rawHere == nil {
			t.Log("no raw programs for this architecture")
			continue
		}
		e, err := loadBPFWith(tp, raw)
		if err != nil {
			t.Fatalf("raw %v: %v", raw, err)
		}
		t.Logf("raw %v: %d programs", raw, len(e.progs))
		e.close()
	}
}
