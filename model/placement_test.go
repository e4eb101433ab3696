package model

import (
	"slices"
	"testing"
)

func TestPlacementCPUs(t *testing.T) {
	four := []int{2, 3, 5, 7} // allowed CPUs need not start at 0 or be contiguous
	cases := []struct {
		placement    Place
		mode         Mode
		side         int
		allowed      []int
		load, server []int
	}{
		{PlaceSplit, ModeAlternate, 0, four, []int{2}, []int{3}},
		{PlaceSplit, ModeAlternate, 1, four, []int{2}, []int{3}}, // sides take turns: same cores
		{PlaceSplit, ModeConcurrent, 0, four, []int{2}, []int{3}},
		{PlaceSplit, ModeConcurrent, 1, four, []int{5}, []int{7}}, // concurrent: cores of its own
		{PlaceShared, ModeConcurrent, 1, four, []int{5}, []int{5}},
		{PlaceShared, ModeAlternate, 1, four, []int{2}, []int{2}},
		{PlaceSplit, ModeConcurrent, 1, []int{0, 1}, []int{0}, []int{1}}, // too few cores to keep sides apart
		{PlaceSplit, ModeAlternate, 0, []int{4}, []int{4}, []int{4}},     // one core: nothing to split
		{PlaceOS, ModeAlternate, 0, four, nil, nil},
		{PlaceSplit, ModeAlternate, 0, nil, nil, nil},
	}
	for _, c := range cases {
		load, server := PlacementCPUs(c.placement, c.mode, c.side, c.allowed)
		if !slices.Equal(load, c.load) || !slices.Equal(server, c.server) {
			t.Errorf("PlacementCPUs(%s, %s, side %d, %v) = %v, %v; want %v, %v", c.placement, c.mode, c.side, c.allowed, load, server, c.load, c.server)
		}
	}
}

func TestPlacementSetting(t *testing.T) {
	s := DefaultSide("A")
	if Place(s.Get(SetPlacement)) != DefaultPlacement() {
		t.Fatalf("default placement %q, want %q", s.Get(SetPlacement), DefaultPlacement())
	}
	for _, v := range Placements {
		if err := s.Set(SetPlacement, string(v)); err != nil || Place(s.Get(SetPlacement)) != v {
			t.Fatalf("set placement %s: %v (now %s)", v, err, s.Get(SetPlacement))
		}
	}
	if err := s.Set(SetPlacement, "everywhere"); err == nil {
		t.Fatal("placement=everywhere accepted")
	}
	if s.Placement != PlaceOS {
		t.Fatalf("a refused value changed the side: %q", s.Placement)
	}
	// Files written before placement existed have none: the default applies.
	old := DefaultSide("A")
	old.Placement = ""
	if err := old.Validate(); err != nil || Place(old.Get(SetPlacement)) != DefaultPlacement() {
		t.Fatalf("empty placement: %v, %q", err, old.Get(SetPlacement))
	}
}

func TestCPUList(t *testing.T) {
	if got := CPUList(nil); got != "any" {
		t.Errorf("CPUList(nil) = %q", got)
	}
	if got := CPUList([]int{0, 3}); got != "0,3" {
		t.Errorf("CPUList(0,3) = %q", got)
	}
}
