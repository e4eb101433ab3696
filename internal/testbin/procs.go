package testbin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The tests' one reader of /proc (Linux): who a process's parent is,
// whether it is a zombie, and which processes run a command, where each
// test file that needed one parsed /proc/PID/stat or cmdline itself.
// Where there is no /proc, each returns its error or nothing.

// ProcStat reads process pid's state ('R', 'S', 'Z' …) and parent from
// /proc/PID/stat.
func ProcStat(pid int) (state byte, ppid int, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses, so
	// cut at the last ')'. (platform.StatFields reads the same layout; nbd's
	// tests use testbin, and platform imports nbd: an import cycle.)
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, &os.PathError{Op: "parse", Path: "/proc/" + strconv.Itoa(pid) + "/stat", Err: os.ErrInvalid}
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0][0], ppid, err
}

// ProcArgv reads process pid's command line as words; a zombie's is
// empty.
func ProcArgv(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// Proc is a running process as a test sees it.
type Proc struct {
	PID  int
	Argv []string
}

// CmdLine is the process's command line, its words joined by spaces.
func (p Proc) CmdLine() string { return strings.Join(p.Argv, " ") }

// pids lists the processes in /proc.
func pids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// ProcsWith lists the processes whose command line holds s, this test's
// own process and zombies left out.
func ProcsWith(s string) []Proc {
	all, _ := pids()
	var out []Proc
	for _, pid := range all {
		argv, err := ProcArgv(pid)
		if err != nil || len(argv) == 0 || pid == os.Getpid() {
			continue
		}
		if p := (Proc{pid, argv}); strings.Contains(p.CmdLine(), s) {
			out = append(out, p)
		}
	}
	return out
}

// ChildPIDs lists the live processes (zombies left out) whose parent is
// pid, as /proc/PID/stat says; the error is /proc's, where there is none.
func ChildPIDs(pid int) ([]int, error) {
	all, err := pids()
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, n := range all {
		if state, ppid, err := ProcStat(n); err == nil && ppid == pid && state != 'Z' {
			kids = append(kids, n)
		}
	}
	return kids, nil
}
