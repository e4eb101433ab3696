package sockdiag

import (
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
)

// osSockets is the scan as it was made through os: Readdirnames and
// Readlink, one allocation a name and a link.
func osSockets(pid int) ([]FD, error) {
	dir := procRoot + "/" + strconv.Itoa(pid) + "/fd"
	names, err := readDirNames(dir, maxFDs)
	if err != nil {
		return nil, err
	}
	var out []FD
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		link, err := os.Readlink(dir + "/" + name)
		if err != nil {
			continue
		}
		if ino, ok := socketInode(link); ok {
			out = append(out, FD{PID: pid, FD: fd, Inode: ino})
		}
	}
	sortFDs(out)
	return out, nil
}

// The raw scan finds what os's listing finds, and allocates a small
// fraction of it (counted): this process with a few sockets, pipes and
// files open.
func TestScanSocketsIsOsListing(t *testing.T) {
	l, err := net.Listen("unix", t.TempDir()+"/s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	pid := os.Getpid()
	want, err := osSockets(pid)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ProcessSockets(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || len(got) < 2 {
		t.Fatalf("scan = %v, os's listing %v", got, want)
	}
	raw := testing.AllocsPerRun(20, func() { _, _ = ProcessSockets(pid) })
	viaOS := testing.AllocsPerRun(20, func() { _, _ = osSockets(pid) })
	t.Logf("allocations a scan: %.0f raw, %.0f through os", raw, viaOS)
	if raw > 0.25*viaOS {
		t.Errorf("a scan allocates %.0f times, through os %.0f: want at most a quarter", raw, viaOS)
	}
}

// The link's inode is read as socketInode reads it, digits and bounds.
func TestSocketInodeOf(t *testing.T) {
	for _, link := range []string{
		"socket:[1]", "socket:[4026532]", "socket:[4294967295]", "socket:[4294967296]", "socket:[0]",
		"socket:[007]", "socket:[]", "socket:[12", "socket:[+1]", "socket:[-1]", "socket:[1_0]",
		"pipe:[123]", "/dev/null", "socket:[99999999999999999999]", "anon_inode:[eventpoll]",
	} {
		gi, gok := socketInodeOf([]byte(link))
		wi, wok := socketInode(link)
		if gi != wi || gok != wok {
			t.Errorf("%q: %d %v, socketInode %d %v", link, gi, gok, wi, wok)
		}
	}
}

// A process gone is ErrGone, as through os.
func TestScanSocketsGone(t *testing.T) {
	if _, err := scanSockets(1<<30, nil); err == nil {
		t.Fatal("a PID that cannot exist was scanned")
	}
}
