package model

import "testing"

// Hash threads: as set, else 1, or the side's cores but the server's when
// it is placed split on a machine with more than two.
func TestResolveHashThreads(t *testing.T) {
	eight := []int{0, 1, 2, 3, 4, 5, 6, 7}
	side := func(name string, placement Place, threads int) SideConfig {
		return SideConfig{Name: name, Placement: placement, HashThreads: threads}
	}
	for _, tc := range []struct {
		sc      SideConfig
		mode    Mode
		allowed []int
		want    int
	}{
		{side("A", PlaceSplit, 0), ModeAlternate, []int{0, 1}, 1},
		{side("A", PlaceSplit, 0), ModeAlternate, eight, 7},
		{side("B", PlaceSplit, 0), ModeConcurrent, eight, 1}, // two cores a side
		{side("A", PlaceShared, 0), ModeAlternate, eight, 1},
		{side("A", PlaceOS, 0), ModeAlternate, eight, 1},
		{side("A", PlaceOS, 5), ModeAlternate, []int{0, 1}, 5},
	} {
		if got := ResolveHashThreads(tc.sc, tc.mode, tc.allowed); got != tc.want {
			t.Errorf("%+v %s %v: %d threads, want %d", tc.sc, tc.mode, tc.allowed, got, tc.want)
		}
	}
	if got := HashLoadCPUs(ModeAlternate, "A", eight, []int{1}); len(got) != 7 || got[0] != 0 || got[1] != 2 {
		t.Errorf("load CPUs %v, want all but the server's 1", got)
	}
	if _, err := ParseHashThreads("0"); err == nil {
		t.Error("0 hash threads accepted")
	}
	sc := DefaultSide("A")
	if err := sc.Set(SetHashThreads, "4"); err != nil || sc.Get(SetHashThreads) != "4" {
		t.Fatalf("set 4: %v, %q", err, sc.Get(SetHashThreads))
	}
	if err := sc.Set(SetHashThreads, "auto"); err != nil || sc.HashThreads != 0 {
		t.Fatalf("set auto: %v, %d", err, sc.HashThreads)
	}
}
