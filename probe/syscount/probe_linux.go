package syscount

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Probe tells whether this process may count system calls: nil, or an
// *Unavailable naming the first obstacle and the command that lifts it.
// It finds tracefs, reads the tracepoint ids and opens one counter on
// itself, which is what decides it. Counting another user's process needs
// more (CAP_PERFMON); Open says so when it comes to that.
func Probe() error {
	tp, err := loadTracepoints()
	if err != nil {
		return err
	}
	m := mode{userOnly: userOnlyWorks(tp)}
	if err := openSelf(tp, m); err != nil {
		return classifyOpen(err, os.Getpid(), m, tp)
	}
	return nil
}

// openSelf opens (and closes) one counter on the calling thread.
func openSelf(tp *tracepoints, m mode) error {
	g, err := openGroup(0, []event{{id: tp.enter[Read]}}, m, true)
	if errors.Is(err, unix.EINVAL) && !m.children {
		m.children = true // Linux < 5.13
		g, err = openGroup(0, []event{{id: tp.enter[Read]}}, m, true)
	}
	if err == nil {
		g.close()
	}
	return err
}

// classifyOpen turns a failed perf_event_open on process pid, by
// counters opened in mode m, into an *Unavailable where the reason is
// known.
func classifyOpen(err error, pid int, m mode, tp *tracepoints) error {
	switch {
	case errors.Is(err, unix.ESRCH):
		return gone(pid)
	case errors.Is(err, unix.ENOSYS):
		return &Unavailable{Reason: ReasonNoPerfEvents, Err: err,
			Why: "the kernel has no perf_event_open (built without CONFIG_PERF_EVENTS)"}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		p := readPerms(pid)
		p.userOnly = m.userOnly
		// Whether this process may count itself tells a rule about the
		// target (its owner) from one about the counters (the paranoid
		// level; upstream kernels read Debian's 3 as 2).
		p.selfAllowed = !p.self && openSelf(tp, m) == nil
		return permissionError(err, pid, p)
	}
	return fmt.Errorf("counting system calls of process %d: %w", pid, err)
}

// perms are the facts a refused perf_event_open is explained by.
type perms struct {
	paranoid    int  // kernel.perf_event_paranoid
	hasParanoid bool // the sysctl exists
	userOnly    bool // the counters excluded the kernel: paranoid 2 allows them
	perfmon     bool // CAP_PERFMON or CAP_SYS_ADMIN in effect
	self        bool // the target is this process
	selfAllowed bool // the same counters on this process were allowed
	uid         int  // this process's real uid
	// ownerUID owns /proc/PID: the target's uid, or 0 when the target is
	// not dumpable; statusUID is its real uid from /proc/PID/status.
	ownerUID, statusUID int
	exe                 string
}

// maxParanoid is the highest kernel.perf_event_paranoid that allows the
// counters without CAP_PERFMON: 2 for counters that exclude the kernel
// (perf then checks nothing more for one's own process), 1 otherwise.
func (p perms) maxParanoid() int {
	if p.userOnly {
		return 2
	}
	return 1
}

func readPerms(pid int) perms {
	p := perms{perfmon: perfmonCapable(), self: pid == os.Getpid(), uid: os.Getuid(),
		ownerUID: -1, statusUID: -1, exe: executable()}
	if b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); err == nil {
		p.paranoid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		p.hasParanoid = err == nil
	}
	var st unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(pid), &st) == nil {
		p.ownerUID = int(st.Uid)
	}
	p.statusUID = statusUID(pid)
	return p
}

// permissionError explains a refusal from the facts (pure, for tests).
func permissionError(err error, pid int, p perms) error {
	otherOwner := !p.perfmon && !p.self && p.ownerUID >= 0 && p.ownerUID != p.uid
	switch {
	case otherOwner && p.selfAllowed:
		return otherUserError(err, pid, p)
	case !p.perfmon && !p.selfAllowed && p.hasParanoid && p.paranoid > p.maxParanoid():
		why := fmt.Sprintf("kernel.perf_event_paranoid is %d and this process has neither root nor CAP_PERFMON: counting one's own processes' system calls needs paranoid %d or lower", p.paranoid, p.maxParanoid())
		if !p.userOnly {
			why += " (this kernel does not count them in a counter that excludes the kernel, which paranoid 2 would allow)"
		}
		return &Unavailable{Reason: ReasonParanoid, Err: err, Why: why,
			Fix: fmt.Sprintf("sudo sysctl -w kernel.perf_event_paranoid=%d", p.maxParanoid())}
	case otherOwner:
		return otherUserError(err, pid, p)
	}
	return &Unavailable{Reason: ReasonBlocked, Err: err,
		Why: fmt.Sprintf("perf_event_open was refused (%v) although kernel.perf_event_paranoid (%d) and this process's capabilities allow it: a seccomp filter (a container's default profile) or a security module blocks it", err, p.paranoid),
		Fix: "docker run --cap-add PERFMON … (or allow perf_event_open in the seccomp profile)"}
}

func otherUserError(err error, pid int, p perms) error {
	why := fmt.Sprintf("process %d runs as uid %d and this one as uid %d: counting another user's process needs CAP_PERFMON (or root)", pid, p.ownerUID, p.uid)
	if p.statusUID == p.uid {
		why = fmt.Sprintf("process %d is not dumpable (it changed credentials, or called prctl(PR_SET_DUMPABLE, 0)): counting it needs CAP_PERFMON (or root)", pid)
	}
	return &Unavailable{Reason: ReasonOtherUser, Err: err, Why: why,
		Fix: "sudo setcap cap_perfmon+ep " + p.exe}
}

// perfmonCapable tells whether CAP_PERFMON or CAP_SYS_ADMIN is in this
// process's effective set (either lets perf ignore the paranoid level and
// the target's owner).
func perfmonCapable() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	eff, ok := statusField(string(b), "CapEff:")
	if !ok {
		return false
	}
	caps, err := strconv.ParseUint(eff, 16, 64)
	return err == nil && caps&(1<<unix.CAP_PERFMON|1<<unix.CAP_SYS_ADMIN) != 0
}

// statusUID is the real uid in /proc/PID/status, or -1.
func statusUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	v, ok := statusField(string(b), "Uid:")
	if !ok {
		return -1
	}
	uid, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return uid
}

// statusField is the first word after key in /proc/…/status text.
func statusField(status, key string) (string, bool) {
	for line := range strings.Lines(status) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0], true
			}
		}
	}
	return "", false
}
