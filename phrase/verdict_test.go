package phrase_test

import (
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
)

// The turns verdict gives the mean bytes in flight and the limit in one
// unit a person reads, as run's table does ("89.07 KiB"), never a mean in
// plain bytes beside a limit in k (doctor said "mean 100132 of 208k").
func TestFillTextTurnsSizesReadable(t *testing.T) {
	fl := model.Fill{Samples: 100, EmptyPct: 51, FullPct: 42, Bytes: 100132, Limit: 212992}
	got := phrase.FillText(fl, model.FlowRead, model.Pace{})
	if !strings.Contains(got, "(mean 97.79 KiB of 208 KiB)") {
		t.Errorf("FillText = %q, want the mean and the limit as (mean 97.79 KiB of 208 KiB)", got)
	}
}

// Too few samples give no verdict, so no words.
func TestFillTextNeedsSamples(t *testing.T) {
	few := model.Fill{Samples: 2, FullPct: 0, EmptyPct: 100, Limit: 1 << 20}
	if s := phrase.FillText(few, model.FlowRead, model.Pace{}); s != "" {
		t.Errorf("2 samples: %q, want no words", s)
	}
}
