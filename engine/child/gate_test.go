package child

import (
	"testing"
	"time"
)

// TestResumeWaitsForWarmSlots: a resume opens the gate only once every
// slot has warmed its buffer, so the active clock does not count the
// warming as load; and it waits at most warmWait, so a slow warm-up
// never holds a load back for long.
func TestResumeWaitsForWarmSlots(t *testing.T) {
	var g gate
	g.init(true)
	g.warming(+1)
	resumed := make(chan struct{})
	go func() { g.setPaused(false); close(resumed) }()
	select {
	case <-resumed:
		t.Fatal("resumed while a slot was still warming")
	case <-time.After(100 * time.Millisecond):
	}
	if n := g.activeNs(); n != 0 {
		t.Errorf("active clock ran %v while warming", time.Duration(n))
	}
	g.warming(-1)
	select {
	case <-resumed:
	case <-time.After(warmWait):
		t.Fatal("still not resumed after the last slot warmed")
	}

	// A warm-up that never ends holds the resume for warmWait only.
	var slow gate
	slow.init(true)
	slow.warming(+1)
	start := time.Now()
	done := make(chan struct{})
	go func() { slow.setPaused(false); close(done) }()
	select {
	case <-done:
		if waited := time.Since(start); waited < warmWait/2 {
			t.Errorf("resumed after %v with a slot still warming, want about %v", waited, warmWait)
		}
	case <-time.After(warmWait + 10*time.Second):
		t.Fatalf("resume still waiting %v after warmWait", 10*time.Second)
	}
}
