package child

import (
	"testing"

	"nbdscope/model"
)

// TestChildSettersCoverTheTable: every setting the table routes to a child
// has the function that applies it there, and every such function belongs
// to a setting routed there. The pause is the load's too: the turns pause
// and resume loads through it (pauseCmd).
func TestChildSettersCoverTheTable(t *testing.T) {
	for _, st := range model.Settings() {
		_, load := loadSetters[st.Name]
		_, server := serverSetters[st.Name]
		wantLoad := st.Where == model.AtLoad || st.Name == model.SetPaused
		if load != wantLoad {
			t.Errorf("%s (where %d): in loadSetters %v, want %v", st.Name, st.Where, load, wantLoad)
		}
		if want := st.Where == model.AtServer; server != want {
			t.Errorf("%s (where %d): in serverSetters %v, want %v", st.Name, st.Where, server, want)
		}
	}
	for name := range loadSetters {
		if _, ok := model.Lookup(name); !ok {
			t.Errorf("loadSetters: %q is not a setting", name)
		}
	}
	for name := range serverSetters {
		if _, ok := model.Lookup(name); !ok {
			t.Errorf("serverSetters: %q is not a setting", name)
		}
	}
}
