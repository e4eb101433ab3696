package clientrun

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"nbdscope/platform"
)

// GroupUsage is one reading of Group: the usage of process group pgid
// now, counting only the threads alive at this moment.
func GroupUsage(pgid int) (Result, bool) { return NewGroup(pgid).Usage() }

// Group follows the CPU seconds, minor page faults and context switches of
// every process in one process group across readings, from /proc. Its
// wake-ups are those of every thread, not only each process's main one
// (/proc/PID/status): a server that serves each connection on a thread of
// its own (nbdkit) would show none. The kernel has no per-process figure
// of them outside the process's own getrusage (signal_struct keeps the
// switches of exited threads, but /proc/PID/status and /proc/PID/sched
// show one task's, /proc/PID/stat none), so Group adds up each thread's
// /proc/TID/status and keeps the last reading of a thread that has gone:
// the sum never goes back when a thread exits. What a thread did between
// the last reading and its exit is missed until the run's wait4.
//
// Each thread is read at /proc/TID/status, not /proc/PID/task/TID/status:
// with entries under /proc/PID/task/TID/, reaping a multithreaded client
// took 1 to 4 s, and an exec side's client stopped after a run or two. The
// waiter's kernel stack was waitid → release_task →
// proc_invalidate_siblings_dcache → d_invalidate → shrink_dcache_parent,
// looping (Linux 6.18), and the client's last thread, whose own exit
// flushes /proc/PID/task/TID/, was freed only when it ended. /proc/TID/ is
// the thread's own tree, which the leader's reaping does not walk.
//
// A Group is not safe for concurrent use.
type Group struct {
	pgid    int
	threads map[int]switchCount // each live thread's last reading
	gone    switchCount         // threads read before and gone since
}

// switchCount is one thread's voluntary and involuntary context switches.
type switchCount struct{ v, nv int64 }

// NewGroup follows process group pgid (the group's leader's pid).
func NewGroup(pgid int) *Group { return &Group{pgid: pgid, threads: map[int]switchCount{}} }

// Usage is the group's usage now: each process's own time and faults and
// those of the children it has waited for, and the switches of every
// thread it has had since the Group's first reading.
// ok is false when /proc cannot be read.
func (g *Group) Usage() (u Result, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return u, false
	}
	seen := make(map[int]switchCount, len(g.threads))
	for _, path := range stats {
		g.addProcess(&u, path, seen)
	}
	// A thread not seen now has exited: its last reading stays counted.
	for tid, c := range g.threads {
		if _, ok := seen[tid]; !ok {
			g.gone = g.gone.add(c)
		}
	}
	g.threads = seen
	sw := g.gone
	for _, c := range seen {
		sw = sw.add(c)
	}
	u.Nvcsw, u.Nivcsw = sw.v, sw.nv
	return u, true
}

// addProcess adds the process of /proc/PID/stat path to u if it is in the
// group, and its threads' switches to seen.
func (g *Group) addProcess(u *Result, path string, seen map[int]switchCount) {
	b, err := os.ReadFile(path)
	if err != nil {
		return // gone meanwhile
	}
	// The command may hold spaces and parentheses: fields start after
	// the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); pgrp is field 5, minflt and cminflt 10 and
	// 11, utime..cstime 14..17.
	if len(f) < 15 || f[2] != strconv.Itoa(g.pgid) {
		return
	}
	var ticks [4]float64
	for k := range ticks {
		ticks[k], _ = strconv.ParseFloat(f[11+k], 64)
	}
	u.UserS += (ticks[0] + ticks[2]) / platform.UserHZ
	u.SysS += (ticks[1] + ticks[3]) / platform.UserHZ
	for _, k := range []int{7, 8} {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		u.MinFlt += n
	}
	g.readThreads(filepath.Dir(path), seen)
}

// readThreads reads the switches of every thread of the process at dir
// (/proc/PID) into seen.
func (g *Group) readThreads(dir string, seen map[int]switchCount) {
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return // gone meanwhile: its threads' last readings stay
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		last, known := g.threads[tid]
		c, ok := switches("/proc/" + t.Name() + "/status")
		switch {
		case !ok && known:
			c = last // exiting now: keep what was read; it goes next time
		case !ok:
			continue
		case known && (c.v < last.v || c.nv < last.nv):
			// A thread's counts never fall: this id is a new thread's.
			g.gone = g.gone.add(last)
		}
		seen[tid] = c
	}
}

func (c switchCount) add(o switchCount) switchCount { return switchCount{c.v + o.v, c.nv + o.nv} }

// switches reads voluntary and involuntary context switches from a
// /proc/PID/status file; ok is false when it cannot be read.
func switches(path string) (c switchCount, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return c, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, val, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		switch k {
		case "voluntary_ctxt_switches":
			c.v = n
		case "nonvoluntary_ctxt_switches":
			c.nv = n
		}
	}
	return c, true
}
