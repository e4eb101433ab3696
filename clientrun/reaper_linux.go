package clientrun

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"nbdscope/platform"
)

// The reaper catches what leaves a group nbdscope started. Killing a
// process group reaches only the processes still in it: a client that
// runs `setsid sleep 1000 &`, or a server that daemonizes (setsid and a
// double fork), leaves a process in a session and group of its own,
// reparented to PID 1 when its parent exits, out of reach of the group's
// SIGKILL and of the janitor, which knows only the groups it was told.
//
// So the process that starts groups makes itself a child subreaper
// (prctl(PR_SET_CHILD_SUBREAPER), Linux 3.4): an orphan anywhere in its
// tree is reparented to it, not to PID 1, and stays findable from its own
// children lists. Every reapEvery while it has groups, it walks its tree
// from its children (/proc/TID/task/TID/children of each of its threads):
// a process under a group it started (or under an adopted orphan) whose
// process group is none it knows has escaped, and that group is told to
// the janitor at once (so a kill -9 of this process, seen by the janitor
// as EOF, takes it too) and killed with SIGKILL when the group it left
// ends, as the stragglers in the group itself are. An adopted child in a
// session other than this process's (nbdscope never starts one with
// setsid) is an escape whose origin is not known: it is killed when no
// group started here is left. Adopted children are reaped here (wait4 on
// their pid alone, never on a process started with os/exec, whose Wait
// owns it).
//
// What it cannot catch: a process that escapes and is orphaned within one
// walk of a kill -9 of this process (then nobody saw it), and a process
// that leaves this process's tree altogether (a double fork whose last
// process is adopted by a subreaper above this one, a systemd-run). The
// janitor is started before the first group, before this process is a
// subreaper, so it is still no child of this process; the subreaper is
// off again once nothing the reaper follows is left.

// reapEvery is how often the tree is walked while groups are running.
const reapEvery = 100 * time.Millisecond

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from linux/prctl.h.
const prSetChildSubreaper = 36

type reaper struct {
	mu       sync.Mutex
	on       bool         // this process is a subreaper
	self     int          // os.Getpid()
	sid      string       // this process's session
	started  map[int]bool // groups started here whose leader is not yet waited for
	escaped  map[int]int  // an escaped group → the started group it left (0: not known)
	dying    map[int]bool // groups killed, followed until they are gone
	watching bool         // the walk's goroutine runs
}

var theReaper = &reaper{started: map[int]bool{}, escaped: map[int]int{}, dying: map[int]bool{}}

// track makes this process a subreaper (once) and follows group pgid,
// just started.
func (r *reaper) track(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
			return // an old kernel: the group kill and the janitor only, as before
		}
		r.on, r.self = true, os.Getpid()
		if st, ok := readStat(r.self); ok {
			r.sid = st.sid
		}
	}
	r.started[pgid] = true
	if !r.watching {
		r.watching = true
		go r.watch()
	}
}

// ended says group pgid's leader has been waited for and the group killed:
// what escaped from it is killed now, and its adopted members reaped.
func (r *reaper) ended(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started[pgid] {
		return
	}
	delete(r.started, pgid)
	r.dying[pgid] = true
	r.look()
}

// watch walks the tree every reapEvery until nothing has been left to
// follow for two walks in a row (an orphan adopted between a walk's look
// at the children and its end is seen by the next), then stops being a
// subreaper until the next group: an orphan of anything else this process
// starts meanwhile (a child's janitor, which leaves its launcher by a
// double fork) goes to PID 1, which reaps it, not to a process that never
// waits for it.
func (r *reaper) watch() {
	idle := 0
	for idle < 2 {
		time.Sleep(reapEvery)
		r.mu.Lock()
		r.look()
		if len(r.started) == 0 && len(r.escaped) == 0 && len(r.dying) == 0 {
			idle++
		} else {
			idle = 0
		}
		if idle == 2 {
			r.watching = false
			if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0); e == 0 {
				r.on = false
			}
		}
		r.mu.Unlock()
	}
}

// procStat is what the reaper reads of a process's stat.
type procStat struct {
	state      byte
	pgid, sid  string
	ppid       int
	childrenOf []string // its threads
}

func readStat(pid int) (procStat, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return procStat{}, false
	}
	f, ok := platform.StatFields(b) // f[0] is field 3 (state): ppid 4, pgrp 5, session 6
	if !ok || len(f) < 4 || f[0] == "" {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	st := procStat{state: f[0][0], ppid: ppid, pgid: f[2], sid: f[3]}
	if d, err := os.Open(dir + "/task"); err == nil {
		st.childrenOf, _ = d.Readdirnames(-1)
		d.Close()
	}
	return st, true
}

// children lists the children of process pid (all its threads').
func children(st procStat) []int {
	var out []int
	for _, tid := range st.childrenOf {
		b, err := os.ReadFile("/proc/" + tid + "/task/" + tid + "/children")
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// look walks the tree once: escapes found are told to the janitor, those
// whose origin has ended are killed, adopted zombies are reaped, and
// killed groups that are gone are forgotten. r.mu is held.
func (r *reaper) look() {
	if !r.on {
		return
	}
	self, ok := readStat(r.self)
	if !ok {
		return
	}
	for _, c := range children(self) {
		st, ok := readStat(c)
		if !ok {
			continue
		}
		origin, ours := r.originOf(c, st)
		if !ours {
			continue // a child of this process's own (a server child, a probe)
		}
		if !r.started[c] && st.state == 'Z' {
			var ws syscall.WaitStatus
			syscall.Wait4(c, &ws, syscall.WNOHANG, nil) // adopted: nobody else waits for it
			continue
		}
		r.walkFrom(c, st, origin, 0)
	}
	r.killEnded()
}

// originOf says whether child c of this process is one of the reaper's
// (started here, or adopted from a started group's tree) and which
// started group it came from (0: not known).
func (r *reaper) originOf(c int, st procStat) (origin int, ours bool) {
	pg, _ := strconv.Atoi(st.pgid)
	switch {
	case r.started[c]:
		return c, true
	case r.started[pg] || r.dying[pg]:
		return pg, true
	}
	if o, ok := r.escaped[pg]; ok {
		return o, true
	}
	if st.sid != r.sid && r.sid != "" {
		r.escape(pg, 0) // adopted from a new session nobody saw start
		return 0, true
	}
	return 0, false
}

// walkFrom notes every process under pid (a process of origin's tree)
// that is in a group the reaper does not know as escaped from origin.
func (r *reaper) walkFrom(pid int, st procStat, origin, depth int) {
	pg, _ := strconv.Atoi(st.pgid)
	if _, known := r.escaped[pg]; !known && !r.started[pg] && !r.dying[pg] {
		r.escape(pg, origin)
	}
	if depth >= 64 {
		return
	}
	for _, c := range children(st) {
		if cst, ok := readStat(c); ok {
			r.walkFrom(c, cst, origin, depth+1)
		}
	}
}

// escape notes group pg as escaped from origin and tells the janitor.
func (r *reaper) escape(pg, origin int) {
	if pg <= 1 {
		return
	}
	r.escaped[pg] = origin
	theJanitor.set("g", "u", strconv.Itoa(pg), true)
}

// killEnded kills the escaped groups whose origin has ended (those of no
// known origin when no group started here is left), and forgets killed
// groups once nothing of them is left. r.mu is held.
func (r *reaper) killEnded() {
	for pg, origin := range r.escaped {
		if r.started[origin] || (origin == 0 && len(r.started) > 0) {
			continue
		}
		syscall.Kill(-pg, syscall.SIGKILL)
		delete(r.escaped, pg)
		r.dying[pg] = true
		theJanitor.set("g", "u", strconv.Itoa(pg), false) // killed: no id of it is reused while a zombie of it is left
	}
	for pg := range r.dying {
		if syscall.Kill(-pg, 0) == syscall.ESRCH {
			delete(r.dying, pg)
		}
	}
}
