package sockdiag

import (
	"fmt"
	"slices"
	"strconv"

	"nbdscope/platform"
)

// FD is one socket a process holds: its PID, the descriptor number, and
// the socket's inode.
type FD struct {
	PID   int
	FD    int
	Inode Inode
}

func (f FD) String() string { return fmt.Sprintf("PID %d fd %d", f.PID, f.FD) }

// Bounds of the /proc scans, so a machine with an absurd number of
// processes or descriptors costs a bounded amount of work, and a tree
// cannot be walked forever.
const (
	maxProcs    = 1 << 17 // /proc entries looked at in one scan
	maxFDs      = 1 << 20 // descriptors looked at per process
	maxTreeSize = 1 << 14 // processes in one tree
)

// socketInode reads the target of a /proc/PID/fd link; ok is false for
// anything but "socket:[N]".
func socketInode(link string) (Inode, bool) {
	const pre, post = "socket:[", "]"
	if len(link) <= len(pre)+len(post) || link[:len(pre)] != pre || link[len(link)-1:] != post {
		return 0, false
	}
	n, err := strconv.ParseUint(link[len(pre):len(link)-1], 10, 32)
	if err != nil || n == 0 {
		return 0, false
	}
	return Inode(n), true
}

// parseStatPPID takes the parent PID out of the text of /proc/PID/stat.
// The command name (field 2) is in parentheses and may itself hold spaces
// and parentheses, so the fields are counted from the last ')'.
func parseStatPPID(stat []byte) (int, error) {
	fields, ok := platform.StatFields(stat)
	if !ok {
		return 0, fmt.Errorf("no ')' after the command name")
	}
	if len(fields) < 2 { // state, ppid
		return 0, fmt.Errorf("%d fields after the command name, want state and ppid", len(fields))
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil || ppid < 0 {
		return 0, fmt.Errorf("ppid %q is not a number", fields[1])
	}
	return ppid, nil
}

// descendants returns root followed by every process whose chain of
// parents leads to root, breadth first, given each process's parent. It
// stops at maxTreeSize and ignores cycles (a PID reused while the scan ran
// can make one).
func descendants(root int, parent map[int]int) []int {
	children := make(map[int][]int, len(parent))
	for pid, pp := range parent {
		if pid != pp {
			children[pp] = append(children[pp], pid)
		}
	}
	for _, c := range children {
		slices.Sort(c) // the same tree in the same order, whatever the map's
	}
	seen := map[int]bool{root: true}
	tree := []int{root}
	for i := 0; i < len(tree) && len(tree) < maxTreeSize; i++ {
		for _, c := range children[tree[i]] {
			if !seen[c] && len(tree) < maxTreeSize {
				seen[c] = true
				tree = append(tree, c)
			}
		}
	}
	return tree
}

func sortFDs(fds []FD) {
	slices.SortFunc(fds, func(a, b FD) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return a.FD - b.FD
	})
}
