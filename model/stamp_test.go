package model

import "testing"

// TestStampIsTheTable: a stamp carries exactly the live settings of a
// side (each starts a new segment when it changes), and for each, moved
// off its default, StampOf and Text give the setting's own text. A new
// live setting fails here until Stamp has its tagged field.
func TestStampIsTheTable(t *testing.T) {
	for _, st := range Settings() {
		_, carried := StampOf(DefaultSide("A")).Text(st.Name)
		if want := st.Live() && st.InSideConfig(); carried != want {
			t.Errorf("%s: carried by the stamp %v, want %v", st.Name, carried, want)
		}
		if !carried {
			continue
		}
		sc := DefaultSide("A")
		sc.Workload = WorkMixed // the read share applies
		cur := sc.Value(st)
		moved := false
		for _, text := range st.Values() {
			v, err := st.Parse(text)
			if n := sc; err == nil && v != cur && n.SetValue(st, v) == nil {
				sc, moved = n, true
				break
			}
		}
		if !moved && st.Type == TypeInt {
			moved = sc.SetValue(st, Value{Int: st.Max}) == nil
		}
		if !moved && st.Type != TypeText {
			t.Errorf("%s: no other value to stamp", st.Name)
		}
		got, _ := StampOf(sc).Text(st.Name)
		if want := st.Format(sc.Value(st)); got != want {
			t.Errorf("%s: stamped %q, want %q", st.Name, got, want)
		}
	}
	// What applies only to a mixed workload reads "" elsewhere.
	sc := DefaultSide("A")
	if got, carried := StampOf(sc).Text(SetReadPercent); got != "" || !carried {
		t.Errorf("read share of a read workload: %q (carried %v)", got, carried)
	}
}
