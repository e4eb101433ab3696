//go:build linux

package sockdiag

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestTreeReadsTheTreesOwnChildrenLists: the tree comes from its
// threads' children lists, not from every process's stat: in a /proc
// that has the lists and no stat files at all, the whole tree is found
// (the scan of /proc/*/stat found the root alone). Each thread's list is
// read in the thread's own tree, /proc/TID/task/TID/children: the fake
// /proc has it only there, and under /proc/PID/task/TID/ the bare
// directory that lists the thread (see childrenOf for why).
func TestTreeReadsTheTreesOwnChildrenLists(t *testing.T) {
	proc := newFakeProc(t)
	children := func(pid, tid, list string) {
		proc.mkdir(pid, "task", tid)
		proc.write(list, tid, "task", tid, "children")
	}
	children("10", "10", "12 11 ")
	children("10", "13", "15\n") // started by a thread of 10's
	children("11", "11", "14 ")
	children("12", "12", "")
	children("14", "14", "10 ") // a reused PID's cycle is ignored
	// 15 has exited: no directory.

	tree, err := Tree(10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{10, 11, 12, 15, 14}; !slices.Equal(tree, want) {
		t.Errorf("Tree(10) = %v, want %v", tree, want)
	}
}

// TestTreeOfARealProcessAgreesWithTheScan: for a shell with two
// children, the children lists give the tree the scan of /proc/*/stat
// gives.
func TestTreeOfARealProcessAgreesWithTheScan(t *testing.T) {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil {
		t.Skipf("this kernel keeps no children lists (%v): Tree scans /proc/*/stat", err)
	}
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the sleeps are killed with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	var tree []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if tree, _ = childrenTree(cmd.Process.Pid); len(tree) == 3 {
			break
		}
	}
	if len(tree) != 3 {
		t.Fatalf("the shell's tree is %v, want it and its two sleeps", tree)
	}
	parents, err := scanParents()
	if err != nil {
		t.Fatal(err)
	}
	if scan := descendants(cmd.Process.Pid, parents); !slices.Equal(tree, scan) {
		t.Errorf("children lists give %v, the scan %v", tree, scan)
	}
}
