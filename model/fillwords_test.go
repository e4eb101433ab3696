package model

import "testing"

// A verdict needs enough samples: a 64 MiB sweep measurement lasts about
// 10 ms, two samples at 200 Hz, and the pace line said "the buffer was
// empty 100% of the time: the client waited on the server" beside "the
// client used all of its 1 core".
func TestFillVerdictNeedsSamples(t *testing.T) {
	few := Fill{Samples: 2, FullPct: 0, EmptyPct: 100, Limit: 1 << 20}
	if v := FillVerdictOf(few); v != FillUnknown {
		t.Errorf("2 samples: verdict %q, want none", v)
	}
	enough := few
	enough.Samples = 40
	if v := FillVerdictOf(enough); v != FillWaitSender {
		t.Errorf("40 samples: verdict %q, want %q", v, FillWaitSender)
	}
}
