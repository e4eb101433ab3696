package syscount

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The standard places of tracefs, in the order tried: its own mount
// point, then the one debugfs mounts on first access.
const (
	tracefsDir      = "/sys/kernel/tracing"
	debugTracefsDir = "/sys/kernel/debug/tracing"
)

// tracepoints are the perf ids of the syscall tracepoints on this kernel,
// read from tracefs. An id of 0 means the kernel has no such tracepoint.
type tracepoints struct {
	dir   string
	enter [NumSyscalls]uint64
	exit  [NumSyscalls]uint64
}

// present lists the calls whose entry and exit tracepoints both exist.
func (t *tracepoints) present() []Syscall {
	var p []Syscall
	for s := range NumSyscalls {
		if t.has(s) {
			p = append(p, s)
		}
	}
	return p
}

// has tells whether s's entry and exit tracepoints both exist.
func (t *tracepoints) has(s Syscall) bool { return t.enter[s] != 0 && t.exit[s] != 0 }

// loadTracepoints finds tracefs and reads every id, or says why it
// cannot (not mounted, not readable, no syscall tracepoints).
func loadTracepoints() (*tracepoints, error) {
	dirs := []string{tracefsDir, debugTracefsDir}
	if mounts, err := os.ReadFile("/proc/self/mounts"); err == nil {
		dirs = tracefsCandidates(string(mounts))
	}
	return loadTracepointsIn(dirs)
}

// loadTracepointsIn reads the ids from the first of dirs (tracefs mount
// points) that has them.
func loadTracepointsIn(dirs []string) (*tracepoints, error) {
	var unreadable, noSyscalls string
	for _, dir := range dirs {
		_, err := readID(dir, "sys_enter_read")
		switch {
		case err == nil:
			return readAll(dir)
		case errors.Is(err, fs.ErrPermission):
			unreadable = cmp.Or(unreadable, dir)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("reading tracepoint ids under %s: %w", dir, err)
		case dirExists(filepath.Join(dir, "events")):
			noSyscalls = cmp.Or(noSyscalls, dir)
		}
	}
	switch {
	case unreadable != "":
		return nil, &Unavailable{Reason: ReasonTracefsUnreadable,
			Why: fmt.Sprintf("tracefs (%s) is readable only by root, and the tracepoint ids are read there; run as root, or let this user's group read it", unreadable),
			Fix: groupReadableFix(unreadable, os.Getgid())}
	case noSyscalls != "":
		return nil, &Unavailable{Reason: ReasonNoSyscallTracepoints,
			Why: fmt.Sprintf("the kernel has no syscall tracepoints (%s/events/syscalls is missing: built without CONFIG_FTRACE_SYSCALLS)", noSyscalls)}
	}
	return nil, &Unavailable{Reason: ReasonTracefsNotMounted,
		Why: "tracefs is not mounted (not at " + tracefsDir + ", nor debugfs at /sys/kernel/debug), and the tracepoint ids are read there",
		Fix: asRoot("mount -t tracefs nodev " + tracefsDir)}
}

// groupReadableFix is the command that lets group gid read tracefs (mode
// 750 on its root; its files are 0440, so group-readable once the mount
// gives them that group). Where only debugfs's copy is there (under the
// root-only /sys/kernel/debug), tracefs is mounted at its own place.
func groupReadableFix(dir string, gid int) string {
	if dir == debugTracefsDir {
		return fmt.Sprintf("sudo mount -t tracefs -o mode=750,gid=%d nodev %s", gid, tracefsDir)
	}
	return fmt.Sprintf("sudo mount -o remount,mode=750,gid=%d %s", gid, dir)
}

// tracefsCandidates are the directories where a tracefs is mounted, given
// the text of /proc/self/mounts: the two standard places first, then any
// other. debugfs mounts one at its tracing directory on first access, so a
// mounted debugfs counts for it. (Only mount points are tried: a user
// cannot look into /sys/kernel/debug, mounted or not, and would be told
// tracefs is unreadable when it is not there at all.)
func tracefsCandidates(mounts string) []string {
	var std [2]bool
	var others []string
	for line := range strings.Lines(mounts) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		dir, fstype := unescapeMount(f[1]), f[2]
		switch {
		case fstype == "tracefs" && dir == tracefsDir:
			std[0] = true
		case fstype == "tracefs" && dir == debugTracefsDir, fstype == "debugfs" && dir == "/sys/kernel/debug":
			std[1] = true
		case fstype == "tracefs" && !slices.Contains(others, dir):
			others = append(others, dir)
		}
	}
	var dirs []string
	for i, dir := range []string{tracefsDir, debugTracefsDir} {
		if std[i] {
			dirs = append(dirs, dir)
		}
	}
	return append(dirs, others...)
}

// unescapeMount undoes the octal escapes (\040 for a space) of a mount
// point in /proc/self/mounts.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func readAll(dir string) (*tracepoints, error) {
	t := &tracepoints{dir: dir}
	for s := range NumSyscalls {
		var err error
		if t.enter[s], err = readID(dir, "sys_enter_"+s.String()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading the tracepoint id of %s: %w", s, err)
		}
		if t.exit[s], err = readID(dir, "sys_exit_"+s.String()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading the tracepoint id of %s: %w", s, err)
		}
	}
	return t, nil
}

// readID reads events/syscalls/NAME/id under a tracefs directory.
func readID(dir, name string) (uint64, error) { return readEventID(dir, "syscalls", name) }

// readEventID reads events/GROUP/NAME/id under a tracefs directory.
func readEventID(dir, group, name string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "events", group, name, "id"))
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("tracepoint %s: id %q: %w", name, strings.TrimSpace(string(b)), err)
	}
	return id, nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// executable names this program for a setcap command.
func executable() string {
	p, err := os.Executable()
	if err != nil {
		return "/path/to/nbdscope"
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// asRoot prefixes a command with sudo unless this process is root.
func asRoot(cmd string) string {
	if os.Geteuid() == 0 {
		return cmd
	}
	return "sudo " + cmd
}
