package clientrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// procPID is the PID of the /proc/PID/… path p names, or 0.
func procPID(p string) int {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return 0
	}
	first, _, _ := strings.Cut(rest, "/")
	pid, _ := strconv.Atoi(first)
	return pid
}

// recordReads has every file a Group reads recorded in *paths until the
// test ends.
func recordReads(t *testing.T, paths *[]string) {
	old := readProc
	readProc = func(p string) ([]byte, error) {
		*paths = append(*paths, p)
		return old(p)
	}
	t.Cleanup(func() { readProc = old })
}

// TestGroupReadsOnlyItsOwnProcesses: between its occasional full scans a
// Group reads the files of its own processes and threads only, not the
// stat of every process on the machine (in the real server's child the
// glob of /proc/[0-9]*/stat was 74% of its system calls).
func TestGroupReadsOnlyItsOwnProcesses(t *testing.T) {
	s := startSleeper(t, "1")
	pid := s.Cmd.Process.Pid
	g := NewGroup(pid)
	if _, ok := g.Usage(); !ok {
		t.Skip("/proc cannot be read")
	}
	ours := map[int]bool{}
	addTasks := func() { // the runtime may start a thread meanwhile
		for _, task := range tasksOf(pid) {
			tid, _ := strconv.Atoi(task.Name())
			ours[tid] = true
		}
	}
	addTasks()
	var paths []string
	recordReads(t, &paths)
	u, ok := g.Usage()
	if !ok {
		t.Fatal("/proc cannot be read at the second reading")
	}
	addTasks()
	if len(paths) == 0 || u.Nvcsw < sleeperNaps/2 {
		t.Fatalf("the second reading read %v and found %+v: nothing of the group's", paths, u)
	}
	for _, p := range paths {
		if !ours[procPID(p)] {
			t.Errorf("a reading of group %d (threads %v) read %s", pid, slices.Sorted(mapKeys(ours)), p)
		}
	}
}

func mapKeys(m map[int]bool) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// scanGroup is every process whose stat gives pgrp pgid, sorted: what
// the Group's members must be.
func scanGroup(t *testing.T, pgid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, procPID(p))
		}
	}
	slices.Sort(pids)
	return pids
}

// startInGroup starts argv in process group pgid (0: a group of its
// own), killed with its group when the test ends.
func startInGroup(t *testing.T, pgid int, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// TestGroupMembersAreTheProcessGroup: the members a Group reads are the
// processes of the group, as a scan of every stat finds them: not a
// child of the leader's that left the group (setsid), and, within
// fullScanEvery readings, one in the group but outside the leader's tree
// (here started by the test into the group), kept from then on.
func TestGroupMembersAreTheProcessGroup(t *testing.T) {
	for _, tool := range []string{"sh", "sleep", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	leader := startInGroup(t, 0, "sh", "-c", "setsid sleep 30 & sleep 30 & exec sleep 30")
	pgid := leader.Process.Pid
	g := NewGroup(pgid)
	var want []int
	for range fullScanEvery { // the shell's children are started by now
		if _, ok := g.Usage(); !ok {
			t.Skip("/proc cannot be read")
		}
		if want = scanGroup(t, pgid); len(want) == 2 && slices.Equal(g.members, want) {
			break
		}
	}
	if len(want) != 2 || !slices.Equal(g.members, want) {
		t.Fatalf("the group of %d is %v by the scan, the Group's members %v: want the shell and its sleep", pgid, want, g.members)
	}
	outsider := startInGroup(t, pgid, "sleep", "30")
	found := 0
	for i := range fullScanEvery + 3 {
		g.Usage()
		switch {
		case slices.Contains(g.members, outsider.Process.Pid):
			found++
		case found > 0:
			t.Fatalf("reading %d lost the member outside the leader's tree: %v", i+1, g.members)
		}
	}
	if want = scanGroup(t, pgid); found < 3 || !slices.Equal(g.members, want) {
		t.Errorf("the group is %v by the scan, the Group's members %v, the outsider %d in %d readings", want, g.members, outsider.Process.Pid, found)
	}
}
