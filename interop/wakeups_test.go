package interop

import (
	"encoding/json"
	"testing"

	"nbdscope/model"
)

// TestRunExecSideKeepsMakingProgress: an exec side's client runs again and
// again, each run moving data, while its wake-ups are read per thread. With
// the threads read under /proc/PID/task/TID/ (49fb2a0), reaping the
// multithreaded qemu-img took seconds (the waiter looped in the kernel's
// proc dcache flush): B moved nothing in 15 to 18 of about 30 samples
// after its first in 3 of 4 such runs, and this test failed 2 times of 3
// (one run finished in 8 s; 18 of 31 samples still). The bound is a share
// of samples, a ratio of counts: a sample in which B moved no byte after
// B's first one is a stall, and at most a quarter may be; there was none in
// about 20 runs with the threads read at /proc/TID/status.
func TestRunExecSideKeepsMakingProgress(t *testing.T) {
	need(t, "qemu-img")
	cmd := `qemu-img convert -f raw -O raw -W -n -S 0 'json:{"file":{"driver":"null-co","size":1073741824}}' {uri}`
	r := runEnv(t, nil, nbdscopeBin, "run", "--exec-b", cmd, "--size-b", "1g", "--workload-b", "write",
		"--mode", "concurrent", "--duration", "8s", "--json")
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	var rep model.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("run --json: %v\n%s", err, r)
	}
	runs := 0
	for _, e := range rep.Events {
		if e.Side == "B" && e.Setting == model.ExecRunEvent {
			runs++
		}
	}
	if runs < 2 {
		t.Fatalf("%d finished runs of a 1 GiB write in 8 s, want at least 2: the client stalled after its exit (or this machine is far too slow)\n%s", runs, r.stderr)
	}
	moved, still, started := 0, 0, false
	for _, s := range rep.Samples {
		if s.Side != "B" || !s.Active {
			continue
		}
		started = started || s.Bytes > 0
		switch {
		case !started:
		case s.Bytes > 0:
			moved++
		default:
			still++
		}
	}
	if total := moved + still; still*4 > total {
		t.Errorf("B moved no byte in %d of %d samples after its first (%d finished runs): its client stalled between runs", still, total, runs)
	}
	t.Logf("B moved data in %d samples, none in %d; %d finished runs", moved, still, runs)
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
