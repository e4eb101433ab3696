package interop

import (
	"testing"

	"nbdscope/model"
)

// TestRunExecSideKeepsMakingProgress: an exec side's client runs again and
// again, each run moving data, while its wake-ups are read per thread. With
// the threads read under /proc/PID/task/TID/ (49fb2a0), reaping the
// multithreaded qemu-img took seconds (the waiter looped in the kernel's
// proc dcache flush): B moved nothing in 15 to 18 of about 30 samples
// after its first in 3 of 4 such runs, one run finishing in 8 s, and this
// test failed 2 times of 3.
//
// A stall is a stretch of samples in which B moved no byte: the bound is
// a count of samples, stallSamples in a row (a second at the default
// interval), which a reaping stall of 1 to 4 s fills. The gaps between
// runs do not: under CI's load (every package's tests at once, -race) 18
// of 32 samples were still, but in thirteen short gaps between 13 runs,
// which a bound on the share of still samples took for a stall.
func TestRunExecSideKeepsMakingProgress(t *testing.T) {
	need(t, "qemu-img")
	cmd := `qemu-img convert -f raw -O raw -W -n -S 0 'json:{"file":{"driver":"null-co","size":1073741824}}' {uri}`
	rep, r := runReport(t, 0, "--exec-b", cmd, "--size-b", "1g", "--workload-b", "write",
		"--mode", "concurrent", "--duration", "8s")
	runs := 0
	for _, e := range rep.Events {
		if e.Side == "B" && e.Setting == model.ExecRunEvent {
			runs++
		}
	}
	if runs < 2 {
		t.Fatalf("%d finished runs of a 1 GiB write in 8 s, want at least 2: the client stalled after its exit (or this machine is far too slow)\n%s", runs, r.stderr)
	}
	moved, still, longest := stillStretches(rep.Samples)
	if longest >= stallSamples {
		t.Errorf("B moved no byte in %d samples in a row (%d of %d after its first; %d finished runs): its client stalled between runs", longest, still, moved+still, runs)
	}
	t.Logf("B moved data in %d samples, none in %d (at most %d in a row); %d finished runs", moved, still, longest, runs)
}

// stallSamples is how many samples in a row without a byte make a stall.
const stallSamples = 4

// stillStretches counts B's active samples after its first byte that
// moved data and that did not, and the longest stretch of the latter.
func stillStretches(samples []model.Sample) (moved, still, longest int) {
	started, stretch := false, 0
	for _, s := range samples {
		if s.Side != "B" || !s.Active {
			continue
		}
		started = started || s.Bytes > 0
		switch {
		case !started:
		case s.Bytes > 0:
			moved++
			stretch = 0
		default:
			still++
			stretch++
			longest = max(longest, stretch)
		}
	}
	return moved, still, longest
}

// TestRealServerNbdkitWakeups: nbdkit serves each connection on threads
// other than its main one, so its wake-ups are every thread's: read from
// its main thread alone (/proc/PID/status) they were 0 per 2 MiB while it
// moved gigabytes.
func TestRealServerNbdkitWakeups(t *testing.T) {
	need(t, "nbdkit")
	rep, _ := runReport(t, 0, "--server-b", "nbdkit -U {socket} -f null {size}", "--duration", "3s")
	sum := rep.Sides[1].Summary
	srv := sum.Server
	if srv == nil || sum.Bytes == 0 {
		t.Fatalf("nbdkit's figures: %+v, %d bytes", srv, sum.Bytes)
	}
	if srv.VolCS == 0 || !srv.VolCSPer2MiB.Known() || srv.VolCSPer2MiB <= 0 {
		t.Errorf("nbdkit moved %d bytes with %d voluntary switches (%v per 2 MiB), want some: its connection threads' are missing", sum.Bytes, srv.VolCS, srv.VolCSPer2MiB)
	}
	t.Logf("nbdkit: %d voluntary switches, %v per 2 MiB", srv.VolCS, srv.VolCSPer2MiB)
}
