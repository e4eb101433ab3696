package schedstat

import (
	"testing"
	"time"
)

// The lead thread is the one that ran the most since the earlier
// snapshot, whatever ran most before: its run and wait are the
// process's LeadRun and LeadWait, while Run and Wait sum every thread.
func TestSubKeepsTheLeadThread(t *testing.T) {
	ms := time.Millisecond
	earlier := Snapshot{At: 1000 * ms, Procs: []Process{{PID: 7, Threads: []Thread{
		{TID: 7, Run: 900 * ms, Wait: 5 * ms, Start: 10 * ms},  // ran most before
		{TID: 8, Run: 100 * ms, Wait: 50 * ms, Start: 10 * ms}, // the runtime's helper
		{TID: 9, Run: 10 * ms, Wait: 1 * ms, Start: 10 * ms},   // the writer, from here on
	}}}}
	later := Snapshot{At: 2000 * ms, Procs: []Process{{PID: 7, Threads: []Thread{
		{TID: 7, Run: 910 * ms, Wait: 6 * ms, Start: 10 * ms},
		{TID: 8, Run: 200 * ms, Wait: 260 * ms, Start: 10 * ms},
		{TID: 9, Run: 610 * ms, Wait: 101 * ms, Start: 10 * ms},
	}}}}
	got := later.Sub(earlier)[7]
	if got.Run != 710*ms || got.Wait != 311*ms {
		t.Errorf("all threads: run %v wait %v, want 710ms 311ms", got.Run, got.Wait)
	}
	if got.LeadRun != 600*ms || got.LeadWait != 100*ms {
		t.Errorf("lead: run %v wait %v, want the writer's 600ms 100ms", got.LeadRun, got.LeadWait)
	}
}
