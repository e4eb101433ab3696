package sockdiag

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// procRoot is where the scans look; tests point it elsewhere.
var procRoot = "/proc"

// ProcessSockets lists the sockets process pid holds, from the links in
// /proc/PID/fd, in descriptor order. A process that does not exist (any
// more) gives an error that errors.Is(err, ErrGone); one whose descriptors
// may not be read (another user's, without CAP_SYS_PTRACE) an error that
// errors.Is(err, fs.ErrPermission). A descriptor closed while the list is
// read is left out.
func ProcessSockets(pid int) ([]FD, error) {
	return processSockets(pid, nil)
}

func processSockets(pid int, dst []FD) ([]FD, error) {
	if pid <= 0 {
		return dst, fmt.Errorf("process %d: not a PID", pid)
	}
	first := len(dst)
	dst, err := scanSockets(pid, dst)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return dst[:first], fmt.Errorf("process %d: %w", pid, ErrGone)
		}
		return dst[:first], fmt.Errorf("process %d: list its descriptors: %w", pid, err)
	}
	sortFDs(dst[first:])
	return dst, nil
}

// readDirNames lists at most limit names of dir, unsorted.
func readDirNames(dir string, limit int) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	for len(names) < limit {
		batch, err := f.Readdirnames(min(1024, limit-len(names)))
		names = append(names, batch...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return names, err
		}
	}
	return names, nil
}

// Tree returns pid followed by all its descendants (children, their
// children, …), breadth first, each process's children in PID order.
// They are read from the tree's own children lists
// (/proc/PID/task/TID/children), so a look costs a few files of the tree,
// not one per process on the machine: a real server's role looks every
// 50 ms, and the scan of every /proc/*/stat that did it read 80 files a
// look on a quiet machine. Where the kernel keeps no such lists
// (CONFIG_PROC_CHILDREN off), one scan of the parent PIDs in
// /proc/*/stat. Processes that exit during the walk are left out; pid
// itself must exist, or the error errors.Is(err, ErrGone).
func Tree(pid int) ([]int, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: not a PID", pid)
	}
	if _, err := os.Stat(procRoot + "/" + strconv.Itoa(pid)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrGone)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	if tree, ok := childrenTree(pid); ok {
		return tree, nil
	}
	parents, err := scanParents()
	if err != nil {
		return nil, err
	}
	return descendants(pid, parents), nil
}

// childrenTree walks pid's tree through the children lists of each
// process's threads; ok is false when the root has no such lists to read
// (the kernel keeps none), for the caller to scan /proc instead.
func childrenTree(root int) (tree []int, ok bool) {
	kids, ok := childrenOf(root)
	if !ok {
		return nil, false
	}
	seen := map[int]bool{root: true}
	tree = []int{root}
	for i := 0; i < len(tree) && len(tree) < maxTreeSize; i++ {
		if i > 0 {
			kids, _ = childrenOf(tree[i]) // one that has exited has none
		}
		for _, c := range kids {
			if !seen[c] && len(tree) < maxTreeSize {
				seen[c] = true
				tree = append(tree, c)
			}
		}
	}
	return tree, true
}

// childrenOf lists pid's children, in PID order, from its threads'
// children lists (a child is listed under the thread that started it);
// ok is false when pid has no thread whose list can be read.
//
// Each thread's list is read in the thread's own tree,
// /proc/TID/task/TID/children, not under the leader's,
// /proc/PID/task/TID/children: entries under /proc/PID/task/TID/ made
// reaping a multithreaded process (qemu-img) take 1 to 4 s, the waiter
// looping in release_task → proc_invalidate_siblings_dcache →
// shrink_dcache_parent, and Tree is read every 50 ms (see clientrun's
// Group, which read each thread's status there and stopped for the same
// reason). The leader's task directory is only listed, for the TIDs.
func childrenOf(pid int) ([]int, bool) {
	dir := procRoot + "/" + strconv.Itoa(pid) + "/task"
	tids, err := readDirNames(dir, maxProcs)
	if err != nil {
		return nil, false
	}
	var kids []int
	ok := false
	for _, tid := range tids {
		b, err := os.ReadFile(procRoot + "/" + tid + "/task/" + tid + "/children")
		if err != nil {
			continue // an exited thread, or no lists at all
		}
		ok = true
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil && c > 0 && c != pid {
				kids = append(kids, c)
			}
		}
	}
	slices.Sort(kids)
	return slices.Compact(kids), ok
}

// scanParents reads every process's parent PID.
func scanParents() (map[int]int, error) {
	names, err := readDirNames(procRoot, maxProcs)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", procRoot, err)
	}
	parents := make(map[int]int, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		stat, err := os.ReadFile(procRoot + "/" + name + "/stat")
		if err != nil {
			continue // exited since the listing
		}
		if ppid, err := parseStatPPID(stat); err == nil {
			parents[pid] = ppid
		}
	}
	return parents, nil
}

// TreeSockets lists the sockets held by pid and all its descendants (see
// Tree), process by process. A descendant that exits meanwhile is left
// out; one whose descriptors may not be read makes it an error, since its
// sockets would be silently missing otherwise.
func TreeSockets(pid int) ([]FD, error) {
	pids, err := Tree(pid)
	if err != nil {
		return nil, err
	}
	var fds []FD
	for i, p := range pids {
		fds, err = processSockets(p, fds)
		if err != nil && (i == 0 || !errors.Is(err, ErrGone)) {
			return nil, err
		}
	}
	return fds, nil
}
