package model

import (
	"encoding/json"
	"testing"
)

// TestSideIDJSON: a side is written "A", "B" or "" and read in any case;
// anything else is refused with the side named.
func TestSideIDJSON(t *testing.T) {
	data, err := json.Marshal(Event{Side: SideB})
	if err != nil || string(data) != `{"t":0,"side":"B","setting":"","from":"","to":""}` {
		t.Errorf("marshal: %s %v", data, err)
	}
	for in, want := range map[string]SideID{`"A"`: SideA, `"b"`: SideB, `""`: WholePair} {
		var s SideID
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("%s: %q %v, want %q", in, s, err, want)
		}
	}
	var s SideID
	if err := json.Unmarshal([]byte(`"C"`), &s); err == nil {
		t.Error(`side "C" accepted`)
	}
	if SideA.Index() != 0 || SideB.Index() != 1 || WholePair.Index() != -1 || SideAt(1) != SideB {
		t.Error("indexes")
	}
}
