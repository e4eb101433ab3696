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
	got := FillText(fl, FlowRead, Pace{})
	if !strings.Contains(got, "(mean 97.79 KiB of 208 KiB)") {
		t.Errorf("FillText = %q, want the mean and the limit as (mean 97.79 KiB of 208 KiB)", got)
	}
}

// A verdict needs enough samples: a 64 MiB sweep measurement lasts about
// 10 ms, two samples at 200 Hz, and the pace line said "the buffer was
// empty 100% of the time: the client waited on the server" beside "the
// client used all of its 1 core".
func TestFillVerdictNeedsSamples(t *testing.T) {
	few := Fill{Samples: 2, FullPct: 0, EmptyPct: 100, Limit: 1 << 20}
	if v := FillVerdictOf(few); v != FillUnknown {
		t.Errorf("2 samples: verdict %q, want none", v)
	}
	if s := FillText(few, FlowRead, Pace{}); s != "" {
		t.Errorf("2 samples: %q, want no words", s)
	}
	enough := few
	enough.Samples = 40
	if v := FillVerdictOf(enough); v != FillWaitSender {
		t.Errorf("40 samples: verdict %q, want %q", v, FillWaitSender)
	}
}
