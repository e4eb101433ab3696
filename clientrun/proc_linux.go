package clientrun

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"nbdscope/platform"
)

// readProc reads a file of /proc; tests see through it what a reading
// reads.
var readProc = os.ReadFile

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
// The group's members are found from the children lists of its
// processes' threads (/proc/TID/task/TID/children, in each thread's own
// tree for the same reason), from the leader and every member of the last
// reading, each kept only while its stat gives the group's pgid (a member
// may leave with setsid or setpgid). A process may be in the group but in
// no member's tree: started into it from outside (setpgid), or orphaned
// before a reading saw it. Every fullScanEvery readings, and at the first,
// the stat of every process on the machine is read instead, which finds
// those, and each is followed from then on. The scan at every reading was
// a quarter of the real-server child's system calls (nbdkit -f null,
// strace -f -y over 2 s: 5745 of 21703); the walk's are 0.6%.
//
// A Group is not safe for concurrent use.
type Group struct {
	pgid     int
	threads  map[int]switchCount // each live thread's last reading
	gone     switchCount         // threads read before and gone since
	readings int                 // how many readings there have been
	members  []int               // the group's processes at the last reading, sorted
}

// fullScanEvery is how often a reading scans every process for the
// group's members (at the default 250 ms a sample, each 5 s).
const fullScanEvery = 20

// maxWalk bounds the processes one walk of the children lists looks at.
const maxWalk = 1 << 14

// switchCount is one thread's voluntary and involuntary context switches.
type switchCount struct{ v, nv int64 }

// NewGroup follows process group pgid (the group's leader's pid).
func NewGroup(pgid int) *Group { return &Group{pgid: pgid, threads: map[int]switchCount{}} }

// member is one process of the group at a reading: its pid, the fields
// of its stat after the command, its threads' ids.
type member struct {
	pid  int
	stat []string
	tids []string
}

// Usage is the group's usage now: each process's own time and faults and
// those of the children it has waited for, and the switches of every
// thread it has had since the Group's first reading.
// ok is false when /proc cannot be read.
func (g *Group) Usage() (u Result, ok bool) {
	g.readings++
	var ms []member
	if g.readings%fullScanEvery == 1 || !haveChildrenLists() {
		ms, ok = g.scan()
	} else {
		ms, ok = g.walk()
	}
	if !ok {
		return u, false
	}
	seen := make(map[int]switchCount, len(g.threads))
	var ticks [4]int64 // utime, stime, cutime, cstime
	g.members = g.members[:0]
	for _, m := range ms {
		// m.stat[0] is field 3 (state); minflt and cminflt are 10 and
		// 11, utime..cstime 14..17.
		for k := range ticks {
			n, _ := strconv.ParseInt(m.stat[11+k], 10, 64)
			ticks[k] += n
		}
		for _, k := range []int{7, 8} {
			n, _ := strconv.ParseInt(m.stat[k], 10, 64)
			u.MinFlt += n
		}
		g.readThreads(m.tids, seen)
		g.members = append(g.members, m.pid)
	}
	slices.Sort(g.members)
	u.UserS = float64(ticks[0]+ticks[2]) / platform.UserHZ
	u.SysS = float64(ticks[1]+ticks[3]) / platform.UserHZ
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

// haveChildrenLists says whether the kernel keeps children lists
// (CONFIG_PROC_CHILDREN); without them every reading scans.
var haveChildrenLists = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
})

// scan finds the group's members in the stat of every process; ok is
// false when /proc cannot be read.
func (g *Group) scan() (ms []member, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return nil, false
	}
	for _, path := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err != nil {
			continue
		}
		if m, ok := g.readMember(pid); ok {
			ms = append(ms, m)
		}
	}
	return ms, true
}

// walk finds the group's members from the leader and the last reading's
// members down their threads' children lists. When it finds none (the
// group has gone, or /proc cannot be read), the scan says.
func (g *Group) walk() ([]member, bool) {
	queue := append([]int{g.pgid}, g.members...)
	looked := make(map[int]bool, len(queue))
	var ms []member
	for i := 0; i < len(queue) && len(looked) < maxWalk; i++ {
		pid := queue[i]
		if looked[pid] {
			continue
		}
		looked[pid] = true
		m, ok := g.readMember(pid)
		if !ok {
			continue // gone, or no longer in the group: nor are its children
		}
		ms = append(ms, m)
		for _, tid := range m.tids {
			b, err := readProc("/proc/" + tid + "/task/" + tid + "/children")
			if err != nil {
				continue // an exited thread
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil && c > 0 {
					queue = append(queue, c)
				}
			}
		}
	}
	if len(ms) == 0 {
		return g.scan()
	}
	return ms, true
}

// readMember reads process pid's stat and lists its threads; ok is false
// when it is gone or not in the group.
func (g *Group) readMember(pid int) (m member, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := readProc(dir + "/stat")
	if err != nil {
		return m, false // gone meanwhile
	}
	f, ok := platform.StatFields(b)
	// f[0] is field 3 (state); pgrp is field 5.
	if !ok || len(f) < 15 || f[2] != strconv.Itoa(g.pgid) {
		return m, false
	}
	m = member{pid: pid, stat: f}
	if d, err := os.Open(dir + "/task"); err == nil { // else gone meanwhile: its threads' last readings stay
		m.tids, _ = d.Readdirnames(-1)
		d.Close()
	}
	return m, true
}

// readThreads reads the switches of threads tids (of one process) into
// seen.
func (g *Group) readThreads(tids []string, seen map[int]switchCount) {
	for _, name := range tids {
		tid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		last, known := g.threads[tid]
		c, ok := switches("/proc/" + name + "/status")
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
	b, err := readProc(path)
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

// Members are the group's processes at the last Usage, sorted: whose
// time a reading of where it went (probe/schedstat) is to read.
func (g *Group) Members() []int { return slices.Clone(g.members) }
