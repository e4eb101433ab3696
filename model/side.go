package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SideID names a side of the pair on what a run reports (Sample, Event,
// Crash, Warning): SideA or SideB, or WholePair for what concerns both (a
// change of mode, a warning of the machine). It is written as in JSON,
// "A", "B" or "", and read in any case, so no reader matches side names
// by hand.
type SideID string

const (
	SideA     SideID = "A"
	SideB     SideID = "B"
	WholePair SideID = ""
)

// SideAt is the side at index i of the pair (0: A, 1: B).
func SideAt(i int) SideID {
	if i == 1 {
		return SideB
	}
	return SideA
}

// Index is the side's index in the pair (A 0, B 1), -1 for WholePair.
func (s SideID) Index() int {
	switch s {
	case SideA:
		return 0
	case SideB:
		return 1
	}
	return -1
}

// ID is the side a configuration describes.
func (s SideConfig) ID() SideID { return SideID(strings.ToUpper(s.Name)) }

// ID is the side a report's side describes.
func (s SideReport) ID() SideID { return SideID(strings.ToUpper(s.Name)) }

// UnmarshalJSON reads "A", "B" or "" in any case (runs saved by hand).
func (s *SideID) UnmarshalJSON(b []byte) error {
	var t string
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	switch id := SideID(strings.ToUpper(t)); id {
	case SideA, SideB, WholePair:
		*s = id
		return nil
	}
	return fmt.Errorf("side %q: want A, B or \"\" (the whole pair)", t)
}
