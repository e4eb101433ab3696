package sockctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// facts are what a refused pidfd_getfd is explained by: the kernel's rule
// is ptrace's (PTRACE_MODE_ATTACH_REALCREDS): the same real uid and gid as
// all of the process's, a dumpable process, and what Yama adds; or
// CAP_SYS_PTRACE, which lifts all but Yama's scope 3.
type facts struct {
	uid, gid     int  // this process's real ids
	capSysPtrace bool // CAP_SYS_PTRACE in effect
	// targetUIDs and targetGIDs are the process's real, effective and
	// saved ids (/proc/PID/status); ownerUID owns /proc/PID, which is
	// root when the process is not dumpable.
	targetUIDs, targetGIDs []int
	ownerUID               int
	yama                   int  // kernel.yama.ptrace_scope, -1 without Yama
	ancestor               bool // this process is an ancestor of the target
	prog                   string
}

func readFacts(pid int) facts {
	f := facts{uid: os.Getuid(), gid: os.Getgid(), ownerUID: -1, yama: -1, prog: filepath.Base(os.Args[0])}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if v, ok := statusFields(string(b), "CapEff:"); ok {
			caps, err := strconv.ParseUint(v[0], 16, 64)
			f.capSysPtrace = err == nil && caps&(1<<unix.CAP_SYS_PTRACE) != 0
		}
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status"); err == nil {
		f.targetUIDs = ids(string(b), "Uid:")
		f.targetGIDs = ids(string(b), "Gid:")
	}
	var st unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(pid), &st) == nil {
		f.ownerUID = int(st.Uid)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			f.yama = n
		}
	}
	f.ancestor = isAncestor(os.Getpid(), pid)
	return f
}

// explainRefusal names the rule that refused the fd (pure, for tests).
func explainRefusal(err error, pid, fd int, f facts) error {
	e := &Error{PID: pid, FD: fd, Err: err}
	asRoot := "sudo " + f.prog + " …"
	switch {
	case f.yama >= 3:
		e.Reason = ReasonYama
		e.Why = "kernel.yama.ptrace_scope is 3: no process may take another's fds, not even root's, until the next boot"
	case !f.capSysPtrace && (!allAre(f.targetUIDs, f.uid) || !allAre(f.targetGIDs, f.gid)):
		e.Reason = ReasonOtherUser
		e.Why = fmt.Sprintf("process %d runs as uid %s, gid %s and this one as uid %d, gid %d: taking another user's fds needs root (CAP_SYS_PTRACE)",
			pid, idList(f.targetUIDs), idList(f.targetGIDs), f.uid, f.gid)
		e.Fix = asRoot
	case !f.capSysPtrace && f.ownerUID >= 0 && f.ownerUID != f.uid:
		e.Reason = ReasonNotDumpable
		e.Why = fmt.Sprintf("process %d is not dumpable (it changed credentials, or called prctl(PR_SET_DUMPABLE, 0)): taking its fds needs root (CAP_SYS_PTRACE)", pid)
		e.Fix = asRoot
	case f.yama == 2 && !f.capSysPtrace:
		e.Reason = ReasonYama
		e.Why = "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE may take another's fds"
		e.Fix = asRoot
	case f.yama == 1 && !f.capSysPtrace && !f.ancestor:
		e.Reason = ReasonYama
		e.Why = fmt.Sprintf("kernel.yama.ptrace_scope is 1: only a process's ancestors may take its fds (or one it names with prctl(PR_SET_PTRACER)), and process %d was not started by this one", pid)
		e.Fix = "sudo sysctl -w kernel.yama.ptrace_scope=0"
	default:
		e.Reason = ReasonDenied
		e.Why = fmt.Sprintf("pidfd_getfd was refused (%v) although the uids, the dumpable flag and kernel.yama.ptrace_scope allow it: a security module (AppArmor, SELinux) or a seccomp filter denies it", err)
	}
	return e
}

// isAncestor tells whether process a is an ancestor of process p, from
// the parents /proc gives (bounded: a chain ends at 1 or 0).
func isAncestor(a, p int) bool {
	for range 4096 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			return false
		}
		v, ok := statusFields(string(b), "PPid:")
		if !ok {
			return false
		}
		if p, err = strconv.Atoi(v[0]); err != nil || p <= 1 {
			return p == a
		}
		if p == a {
			return true
		}
	}
	return false
}

// statusFields are the words after key in /proc/…/status text.
func statusFields(status, key string) ([]string, bool) {
	for line := range strings.Lines(status) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f, true
			}
		}
	}
	return nil, false
}

// ids are the first three numbers of a Uid:/Gid: line: real, effective,
// saved.
func ids(status, key string) []int {
	f, _ := statusFields(status, key)
	var out []int
	for _, s := range f[:min(3, len(f))] {
		if n, err := strconv.Atoi(s); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// allAre tells whether every id is want (none read: unknown, so yes).
func allAre(ids []int, want int) bool {
	for _, id := range ids {
		if id != want {
			return false
		}
	}
	return true
}

func idList(ids []int) string {
	var s []string
	for _, id := range ids {
		s = append(s, strconv.Itoa(id))
	}
	if len(s) == 0 {
		return "?"
	}
	if len(s) == 3 && s[0] == s[1] && s[1] == s[2] {
		return s[0]
	}
	return strings.Join(s, "/")
}
