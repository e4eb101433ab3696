package child

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"nbdscope/engine/wire"
	"nbdscope/internal/childtest"
	"nbdscope/model"
	"nbdscope/nbd"
)

// rawSwitches is a thread's voluntary + involuntary context switches,
// read from /proc with raw system calls: a read through the runtime's
// syscall entry would itself wake sysmon from its deep sleep, the very
// thing the test counts.
func rawSwitches(tid int) (uint64, bool) {
	path := append([]byte("/proc/self/task/"+strconv.Itoa(tid)+"/status"), 0)
	cwd := unix.AT_FDCWD
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return 0, false
	}
	defer unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	var buf [4096]byte
	n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if e != 0 {
		return 0, false
	}
	var sum uint64
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "voluntary_ctxt_switches") {
			x, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			sum += x
		}
	}
	return sum, true
}

// tids lists this process's threads.
func tids(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestResumeLeavesTheRuntimeAsleep: a load of one processor (a pinned
// load child's) reading 2 MiB requests on the ppoll reader is paused
// until its runtime is idle, then resumed for 64 requests. A paused
// process has every processor idle, so sysmon sleeps deeply; a system
// call made through the runtime wakes it into its 20 µs ticks, which it
// leaves only after 50 of them without work and a few doublings: some 60
// wake-ups, each on the reader's core. With the reader asleep in ppoll
// through the runtime across the pause, the threads other than the
// reader's switched 1.6 times a request; with its first wait raw but the
// pause still spent in ppoll, 1.0; raw and parked with nothing in flight
// (nbd's readerthread.go), 0.03-0.05.
func TestResumeLeavesTheRuntimeAsleep(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	childtest.StartServer(t, wire.ServerSpec{Socket: sock, Settings: wire.Start{model.SetBackend: {Str: "null"}, model.SetSize: {Int: 1 << 30}, model.SetTransport: {Str: "unix"}}})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	spec := wire.LoadSpec{URI: nbd.URI{Transport: "unix", Socket: sock}.String(), Settings: wire.Start{model.SetConnections: {Int: 1},
		model.SetRequestSize: {Int: 2 << 20}, model.SetInFlight: {Int: 8}, model.SetWorkload: {Str: string(model.WorkRead)},
		model.SetConsume: {Str: string(model.ConsumeNone)}, model.SetReader: {Str: string(model.ReaderPoll)}}}
	r := startLoad(t, spec)
	waitLoad(t, r, func() bool { return r.ops.Load() >= 64 })
	const rounds, requests = 4, 64
	var others, reqs uint64
	for range rounds {
		r.gate.setPaused(true)
		ids := tids(t)
		time.Sleep(100 * time.Millisecond) // sysmon's ramp down and its deep sleep
		before := map[int]uint64{}
		for _, id := range ids {
			before[id], _ = rawSwitches(id)
		}
		ops0 := r.ops.Load()
		r.gate.setPaused(false)
		for deadline := time.Now().Add(30 * time.Second); r.ops.Load() < ops0+requests && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		var readerD, sum uint64
		for _, id := range ids {
			n, ok := rawSwitches(id)
			if !ok {
				continue
			}
			d := n - before[id]
			sum += d
			readerD = max(readerD, d)
		}
		reqs += r.ops.Load() - ops0
		others += sum - readerD // the busiest thread is taken for the reader's
	}
	perRequest := float64(others) / float64(reqs)
	t.Logf("%d resumes, %d requests: threads other than the busiest switched %d times (%.3f a request)", rounds, reqs, others, perRequest)
	if perRequest > 0.3 {
		t.Errorf("after a resume the runtime's threads switched %.3f times a request (%d in %d requests), want at most 0.3", perRequest, others, reqs)
	}
}
