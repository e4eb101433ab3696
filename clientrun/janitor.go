package clientrun

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// GroupGrace is how long a process group nbdscope started gets between
// SIGTERM and SIGKILL: the one grace of a group, given by whoever started
// it (a real server's child when the run ends, the janitor when nbdscope
// dies). Whoever stops that starter waits longer than this, so the
// starter is not killed in the middle of its own grace.
const GroupGrace = 2 * time.Second

// The janitor makes sure nothing nbdscope started outlives it, however it
// ends (kill -9 included). A process's parent-death signal reaches only
// its direct child: a real client or server that forks (sh -c 'sleep 1000
// & nbdcopy …; wait') leaves its tree under PID 1 when the process that
// started it dies without killing its group. So each process that starts
// process groups (the controller for a sweep's clients, a child for a real
// server or an exec side's client) has a janitor: a /bin/sh started once,
// in a process group of its own, ignoring the terminal's signals, that
// reads the groups and temporary directories it is to look after on its
// stdin. The write end of that pipe is held by this process alone
// (close-on-exec), so when this process ends, however it ends, the
// janitor reads EOF: it then sends SIGTERM (and SIGCONT, for a paused
// group) to each group still listed, waits up to GroupGrace for them to
// go, sends SIGKILL, removes each directory still listed, and exits. A
// group or directory that its owner ended itself is taken off the list
// first (Release), so a process group id reused later is never touched.
//
// The janitor is a shell script, not this binary in another role: it must
// work for every binary that starts a group (nbdscope, its children, the
// test binaries that stand in for them), and a shell starts in about a
// millisecond and weighs nothing beside a Go runtime. It is in no group it
// looks after and no client's tree, so none of its time is counted as a
// client's.

// janitorScript is the janitor: lines "g PGID" / "u PGID" add and remove
// a group, "d PATH" / "r PATH" a directory (a path is one line).
const janitorScript = `exec <&3 3<&-
trap '' INT HUP TERM QUIT PIPE
g=' '
nl='
'
d=$nl
while IFS= read -r l; do
	a=${l#??}
	case $l in
	"g "*) g="$g$a " ;;
	"u "*) case $g in *" $a "*) g="${g%% "$a" *} ${g#* "$a" }" ;; esac ;;
	"d "*) d="$d$a$nl" ;;
	"r "*) case $d in *"$nl$a$nl"*) d="${d%%"$nl$a$nl"*}$nl${d#*"$nl$a$nl"}" ;; esac ;;
	esac
done
for p in $g; do kill -TERM -$p; kill -CONT -$p; done 2>/dev/null
i=0
while [ $i -lt TICKS ]; do
	left=
	for p in $g; do kill -0 -$p 2>/dev/null && left=1; done
	[ -z "$left" ] && break
	sleep 0.1
	i=$((i+1))
done
for p in $g; do kill -KILL -$p; done 2>/dev/null
printf '%s' "$d" | while IFS= read -r x; do [ -n "$x" ] && rm -rf -- "$x"; done
`

// janitor is this process's janitor, started at the first Guard.
type janitor struct {
	mu     sync.Mutex
	w      *os.File
	groups map[int]bool
	dirs   map[string]bool
}

var theJanitor = &janitor{groups: map[int]bool{}, dirs: map[string]bool{}}

// Guard puts process group pgid, just started by this process, in the
// janitor's care: it is killed if this process ends before Release(pgid).
// On Linux the reaper follows it too: what leaves the group is found and
// killed with it (reaper_linux.go).
func Guard(pgid int) {
	theJanitor.set("g", "u", strconv.Itoa(pgid), true)
	theReaper.track(pgid)
}

// Release takes process group pgid out of the janitor's care, once it has
// been killed and its leader reaped; what escaped from it is killed.
func Release(pgid int) {
	theJanitor.set("g", "u", strconv.Itoa(pgid), false)
	theReaper.ended(pgid)
}

// GuardDir puts directory path in the janitor's care: it is removed if
// this process ends before ReleaseDir(path). A path with a newline cannot
// be told to the janitor and is left out.
func GuardDir(path string) {
	if !strings.Contains(path, "\n") {
		theJanitor.set("d", "r", path, true)
	}
}

// ReleaseDir takes directory path out of the janitor's care (its owner
// removed it).
func ReleaseDir(path string) {
	if !strings.Contains(path, "\n") {
		theJanitor.set("d", "r", path, false)
	}
}

// set adds (on) or removes an entry and tells the janitor, starting it
// first if need be; a janitor that died is started again with the whole
// list. Without /bin/sh nothing is looked after, as before it.
func (j *janitor) set(add, del, arg string, on bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if add == "g" {
		n, _ := strconv.Atoi(arg)
		if on {
			j.groups[n] = true
		} else {
			delete(j.groups, n)
		}
	} else if on {
		j.dirs[arg] = true
	} else {
		delete(j.dirs, arg)
	}
	line := del + " " + arg + "\n"
	if on {
		line = add + " " + arg + "\n"
	}
	if j.w != nil {
		if _, err := j.w.WriteString(line); err == nil {
			return
		}
		j.w.Close() // it has gone (killed by hand)
		j.w = nil
	}
	if !on && j.w == nil {
		return // nothing to look after that a new janitor needs told
	}
	j.start()
}

// start starts a janitor and tells it the whole list. j.mu is held.
func (j *janitor) start() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	script := strings.Replace(janitorScript, "TICKS", strconv.Itoa(int(GroupGrace/(100*time.Millisecond))), 1) // its sleeps are 0.1 s
	// The shell started runs the janitor in the background and exits at
	// once: the janitor is then no child of this process (nothing to
	// reap, no child a test counting this process's children finds). A
	// background job's stdin is /dev/null, so the pipe is its fd 3.
	cmd := exec.Command("/bin/sh", "-c", "(\n"+script+"\n) &")
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // out of the terminal's group: ctrl+c is ours to handle
	if err := cmd.Run(); err != nil {
		w.Close()
		return
	}
	var b strings.Builder
	for g := range j.groups {
		fmt.Fprintf(&b, "g %d\n", g)
	}
	for d := range j.dirs {
		fmt.Fprintf(&b, "d %s\n", d)
	}
	if _, err := w.WriteString(b.String()); err != nil {
		w.Close()
		return
	}
	j.w = w
}
