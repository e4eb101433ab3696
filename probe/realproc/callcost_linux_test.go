package realproc

import (
	"errors"
	"testing"

	"nbdscope/probe/syscount"
)

// MeasureCallCost counts the loop it times (it fails when the counter
// missed the writes) and times as many calls each way.
func TestMeasureCallCost(t *testing.T) {
	c, err := MeasureCallCost()
	var u *syscount.Unavailable
	if errors.As(err, &u) {
		t.Skipf("counting not allowed here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.Calls != 2*callCostOps*callCostRounds || !(c.Ratio > 0) || c.PerCall < 0 {
		t.Errorf("cost %+v", c)
	}
}
