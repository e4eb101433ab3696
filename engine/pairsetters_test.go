package engine

import (
	"testing"

	"nbdscope/model"
)

// TestPairSettersCoverTheTable: every setting the table keeps in the
// pair's own state (AtPair) has the Controller call that applies it, and
// every such call belongs to one.
func TestPairSettersCoverTheTable(t *testing.T) {
	for _, st := range model.Settings() {
		_, ok := pairSetters[st.Name]
		if want := st.Where == model.AtPair; ok != want {
			t.Errorf("%s (where %d): in pairSetters %v, want %v", st.Name, st.Where, ok, want)
		}
	}
	for name := range pairSetters {
		if _, ok := model.Lookup(name); !ok {
			t.Errorf("pairSetters: %q is not a setting", name)
		}
	}
}
