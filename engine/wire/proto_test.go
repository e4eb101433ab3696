package wire

import (
	"encoding/json"
	"testing"

	"nbdscope/model"
)

// TestSpecsAreTheTable: each child's start spec carries exactly the
// table's settings that start in its role, each as the child applies it,
// and they survive the JSON line the child is started with. Nothing here
// names a setting: a new entry of the table is carried with no change to
// this package.
func TestSpecsAreTheTable(t *testing.T) {
	sc := model.DefaultSide("A")
	env := model.ArgEnv{Mode: model.ModeAlternate, Allowed: []int{0, 1}}
	specs := map[string]Start{
		model.RoleLoad:   NewLoadSpec(sc, "nbd+unix:///?socket=/x", env).Settings,
		model.RoleServer: NewServerSpec(sc, "/x").Settings,
	}
	for role, s := range specs {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Start
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, st := range model.Settings() {
			got, carried := back[st.Name]
			if want := st.StartsIn() == role; carried != want {
				t.Errorf("%s spec: carries %s %v, want %v", role, st.Name, carried, want)
			}
			if carried {
				n++
				if want := st.ChildArg(sc.Value(st), sc, env); got != want {
					t.Errorf("%s spec: %s = %+v, want %+v", role, st.Name, got, want)
				}
			}
		}
		if n != len(back) {
			t.Errorf("%s spec: %d entries, %d of them settings", role, len(back), n)
		}
	}
}
