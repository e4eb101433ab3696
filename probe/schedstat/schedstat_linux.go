package schedstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/platform"
)

// userHZ is the unit of a stat's start time: USER_HZ, which Linux fixes
// at 100 for user space on every architecture (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// Supported is nil where schedstat can be read, else an *Unavailable.
func Supported() error {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if errors.Is(err, fs.ErrNotExist) {
		return &Unavailable{Cause: CauseKernel, Reason: "this kernel has no /proc/PID/schedstat (built without CONFIG_SCHED_INFO)",
			Fix: "a kernel with CONFIG_SCHEDSTATS or CONFIG_TASK_DELAY_ACCT, which select it"}
	}
	if err != nil {
		return &Unavailable{Cause: CauseProc, Reason: err.Error(), Fix: "check that /proc is mounted"}
	}
	if strings.HasPrefix(string(b), "0 0 ") {
		// Kernels before 5.15 print zeros when sched_info is off at run time.
		return &Unavailable{Cause: CauseOff, Reason: "schedstat reads 0 for a running thread: sched_info is off",
			Fix: "boot with delayacct or set kernel.sched_schedstats=1"}
	}
	return nil
}

// Now is the boot clock (CLOCK_BOOTTIME) a thread's start is read on.
func Now() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return time.Duration(ts.Nano())
}

// Read reads every thread of pid.
func Read(pid int) (Process, error) {
	if err := Supported(); err != nil {
		return Process{}, err
	}
	return readProcess(pid, nil)
}

// readProcess reads pid's threads; known are thread starts already read
// (by TID), whose stat is not read again.
func readProcess(pid int, known map[int]time.Duration) (Process, error) {
	p := Process{PID: pid}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, fmt.Errorf("schedstat: process %d: %w", pid, err)
	}
	if p.PPID, _, err = statPPIDStart(stat); err != nil {
		return p, fmt.Errorf("schedstat: process %d: %w", pid, err)
	}
	if i, j := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')'); i >= 0 && j > i {
		p.Comm = string(stat[i+1 : j])
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return p, fmt.Errorf("schedstat: process %d: %w", pid, err)
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		start, ok := known[tid]
		th, err := readThread(dir, tid, start, ok)
		if errors.Is(err, fs.ErrNotExist) {
			continue // it exited while we read
		}
		if err != nil {
			return p, err
		}
		p.Threads = append(p.Threads, th)
	}
	return p, nil
}

// readThread reads one task's schedstat and, unless known (a thread seen
// at the last read: a TID is not reused within a poll's interval), its
// start time.
func readThread(dir string, tid int, start time.Duration, known bool) (Thread, error) {
	th := Thread{TID: tid}
	ss, err := os.ReadFile(fmt.Sprintf("%s/%d/schedstat", dir, tid))
	if err != nil {
		return th, err
	}
	f := strings.Fields(string(ss))
	if len(f) < 3 {
		return th, fmt.Errorf("schedstat: task %d: %q: want 3 fields", tid, ss)
	}
	run, err1 := strconv.ParseUint(f[0], 10, 64)
	wait, err2 := strconv.ParseUint(f[1], 10, 64)
	slices, err3 := strconv.ParseUint(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return th, fmt.Errorf("schedstat: task %d: %w", tid, err)
	}
	if !known {
		stat, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", dir, tid))
		if err != nil {
			return th, err
		}
		if _, start, err = statPPIDStart(stat); err != nil {
			return th, fmt.Errorf("schedstat: task %d: %w", tid, err)
		}
	}
	th.Run, th.Wait, th.Slices, th.Start = time.Duration(run), time.Duration(wait), slices, start
	return th, nil
}

// statPPIDStart reads the parent (field 4) and the start time (field 22,
// clock ticks since boot) of a stat text.
func statPPIDStart(stat []byte) (ppid int, start time.Duration, err error) {
	f, ok := platform.StatFields(stat)
	if !ok || len(f) < 20 {
		return 0, 0, fmt.Errorf("stat %q: too few fields", stat)
	}
	ppid, err1 := strconv.Atoi(f[1])
	ticks, err2 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("stat: %w", err)
	}
	return ppid, time.Duration(ticks) * time.Second / userHZ, nil
}

// ReadTree reads pid and every process descended from it, the root
// first. At is taken after the reads, so a span ends no earlier than the
// figures it holds.
func ReadTree(pid int) (Snapshot, error) {
	if err := Supported(); err != nil {
		return Snapshot{}, err
	}
	var s Snapshot
	for _, p := range treeOf(pid) {
		pr, err := readProcess(p, nil)
		if err != nil {
			if p == pid {
				return s, err
			}
			continue // a descendant that exited meanwhile
		}
		s.Procs = append(s.Procs, pr)
	}
	s.At = Now()
	return s, nil
}

// treeOf is pid and its descendants, found from every process's parent.
func treeOf(pid int) []int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid, _, err := statPPIDStart(stat); err == nil {
			kids[ppid] = append(kids[ppid], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i]]...)
	}
	return out
}

// ReadPIDs reads the processes pids (those still there), with At taken
// after the reads.
func ReadPIDs(pids ...int) Snapshot { return readPIDs(nil, pids) }

// readPIDs is ReadPIDs with the thread starts already known.
func readPIDs(known map[int]time.Duration, pids []int) Snapshot {
	var s Snapshot
	for _, pid := range pids {
		if p, err := readProcess(pid, known); err == nil {
			s.Procs = append(s.Procs, p)
		}
	}
	s.At = Now()
	return s
}

// supportedOnce is Supported, read once: a Counter's reads then cost only
// the threads' own files.
var supportedOnce = sync.OnceValue(Supported)
