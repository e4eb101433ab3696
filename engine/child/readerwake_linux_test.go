package child

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/internal/childtest"
	"nbdscope/model"
	"nbdscope/nbd"
)

// threadUse is one thread's context switches and time on a CPU so far.
type threadUse struct {
	switches uint64 // voluntary + involuntary
	cpuNs    uint64
}

// threadUses reads every thread of this process from /proc/self/task.
func threadUses(t *testing.T) map[int]threadUse {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	uses := map[int]threadUse{}
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc/self/task", e.Name())
		status, err1 := os.ReadFile(filepath.Join(dir, "status"))
		sched, err2 := os.ReadFile(filepath.Join(dir, "schedstat"))
		if err1 != nil || err2 != nil {
			continue // the thread ended
		}
		var u threadUse
		for _, line := range strings.Split(string(status), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "voluntary_ctxt_switches") {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				u.switches += n
			}
		}
		fmt.Sscan(string(sched), &u.cpuNs)
		uses[tid] = u
	}
	return uses
}

// TestPollReaderLeavesTheRuntimeAsleep: a load reading 2 MiB requests on
// the ppoll reader, in a process of one processor (a pinned load child's),
// from a server in another process. The reader's thread sleeps in ppoll
// whenever it empties the socket; the process's other threads, the
// runtime's, should hardly wake: sysmon once per 10 ms once it finds
// nothing to do. When the reader never passed through the scheduler,
// sysmon preempted it every 10 ms and went back to waking every 20 µs:
// the other threads switched 0.38-0.58 times a request here, against
// 0.03-0.05 after (with -race too). The consume mode is none, so that the
// race detector's slower Go code does not slow the requests.
func TestPollReaderLeavesTheRuntimeAsleep(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	childtest.StartServer(t, wire.ServerSpec{Socket: sock, Settings: wire.Start{model.SetBackend: {Str: "null"}, model.SetSize: {Int: 1 << 30}, model.SetTransport: {Str: "unix"}}})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	spec := wire.LoadSpec{URI: nbd.URI{Transport: "unix", Socket: sock}.String(), Settings: wire.Start{model.SetConnections: {Int: 1},
		model.SetRequestSize: {Int: 2 << 20}, model.SetInFlight: {Int: 8}, model.SetWorkload: {Str: string(model.WorkRead)},
		model.SetConsume: {Str: string(model.ConsumeNone)}, model.SetReader: {Str: string(model.ReaderPoll)}}}
	r := startLoad(t, spec)
	waitLoad(t, r, func() bool { return r.ops.Load() >= 64 })
	const requests = 2048 // 4 GiB: seconds, many of sysmon's 10 ms
	ops0, before := r.ops.Load(), threadUses(t)
	waitLoadFor(t, r, 120*time.Second, func() bool { return r.ops.Load() >= ops0+requests })
	after, ops := threadUses(t), r.ops.Load()-ops0
	r.gate.setPaused(true)

	reader, readerCPU := 0, uint64(0)
	for tid, u := range after {
		if d := u.cpuNs - before[tid].cpuNs; d > readerCPU {
			reader, readerCPU = tid, d
		}
	}
	var others uint64
	for tid, u := range after {
		if tid != reader {
			others += u.switches - before[tid].switches
		}
	}
	perRequest := float64(others) / float64(ops)
	t.Logf("%d requests: the reader's thread switched %d times, the others %d (%.3f a request)",
		ops, after[reader].switches-before[reader].switches, others, perRequest)
	if perRequest > 0.15 {
		t.Errorf("the runtime's threads switched %.3f times a request (%d in %d requests), want at most 0.15: the runtime is woken by the reader", perRequest, others, ops)
	}
}
