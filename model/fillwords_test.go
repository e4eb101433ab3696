package model

import (
	"strings"
	"testing"
)

// The turns verdict gives the mean bytes in flight and the limit in one
// unit a person reads, as run's table does ("89.07 KiB"), never a mean in
// plain bytes beside a limit in k (doctor said "mean 100132 of 208k").
func TestFillTextTurnsSizesReadable(t *testing.T) {
	fl := Fill{Samples: 100, EmptyPct: 51, FullPct: 42, Bytes: 100132, Limit: 212992}
	got := FillText(fl, WorkRead, Pace{})
	if !strings.Contains(got, "(mean 97.79 KiB of 208 KiB)") {
		t.Errorf("FillText = %q, want the mean and the limit as (mean 97.79 KiB of 208 KiB)", got)
	}
}
