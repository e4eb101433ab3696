//go:build linux

package sockdiag

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTreeToleratesAStrangeProc: a /proc where processes vanish between
// the listing and the read, stat files are garbage, and names are not
// PIDs; the tree is found from what can be read.
func TestTreeToleratesAStrangeProc(t *testing.T) {
	proc := newFakeProc(t)
	write := func(pid, stat string) {
		if stat == "" {
			proc.mkdir(pid)
		} else {
			proc.write(stat, pid, "stat")
		}
	}
	write("1", "1 (init) S 0 1 1 0")
	write("10", "10 (qemu-nbd (x)) S 1 10 10 0")
	write("11", "11 (worker) S 10 10 10 0")
	write("12", "")                 // exited: no stat any more
	write("13", "13 (garbage")      // no closing paren
	write("14", "14 (sh) S 11 1 1") // grandchild
	write("self", "self (x) S 10 1 1")
	write("sys", "")

	tree, err := Tree(10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tree, []int{10, 11, 14}) {
		t.Errorf("Tree(10) = %v, want [10 11 14]", tree)
	}
	if _, err := Tree(99); !errors.Is(err, ErrGone) {
		t.Errorf("Tree of a PID not in /proc: %v", err)
	}
	// No fd directories: the processes are gone by the time they are read.
	if _, err := TreeSockets(10); !errors.Is(err, ErrGone) {
		t.Errorf("TreeSockets when the root's fds cannot be listed: %v", err)
	}
	fdDir := proc.mkdir("10", "fd")
	os.Symlink("socket:[555]", filepath.Join(fdDir, "3"))
	os.Symlink("pipe:[556]", filepath.Join(fdDir, "4"))
	os.Symlink("socket:[557]", filepath.Join(fdDir, "10"))
	fds, err := TreeSockets(10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []FD{{10, 3, 555}, {10, 10, 557}}; !slices.Equal(fds, want) {
		t.Errorf("TreeSockets = %v, want %v (descendants without fd directories left out)", fds, want)
	}
}

// fakeProc is a /proc a test makes: the scans read it instead of the
// real one until the test ends.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) fakeProc {
	p := fakeProc{t: t, root: t.TempDir()}
	old := procRoot
	procRoot = p.root
	t.Cleanup(func() { procRoot = old })
	return p
}

// mkdir makes the directory at path (its elements, under the root) and
// returns it.
func (p fakeProc) mkdir(path ...string) string {
	dir := filepath.Join(append([]string{p.root}, path...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	return dir
}

// write makes the file at path, and its directory, holding content.
func (p fakeProc) write(content string, path ...string) {
	file := filepath.Join(p.mkdir(path[:len(path)-1]...), path[len(path)-1])
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}
