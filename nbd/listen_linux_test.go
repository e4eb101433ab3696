package nbd

import (
	"bytes"
	"encoding/binary"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// dirEvent is one inotify event in the watched directory.
type dirEvent struct {
	mask uint32
	name string
}

// watchDir returns a function that reports every create, attribute
// change, rename and delete in dir since the call. The kernel queues
// events as the operations happen, so once ListenUnix has returned, all
// of its events are there to read.
func watchDir(t *testing.T, dir string) func() []dirEvent {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	mask := uint32(unix.IN_CREATE | unix.IN_ATTRIB | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE)
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		t.Fatal(err)
	}
	return func() []dirEvent {
		var evs []dirEvent
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if err != nil || n <= 0 {
				return evs
			}
			for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
				m := binary.NativeEndian.Uint32(b[4:8])
				l := int(binary.NativeEndian.Uint32(b[12:16]))
				name := string(bytes.TrimRight(b[16:16+l], "\x00"))
				evs = append(evs, dirEvent{m, name})
				b = b[16+l:]
			}
		}
	}
}

// TestListenUnixNeverWider watches the directory while ListenUnix runs:
// the socket's name only ever appears by a rename (never created in
// place, where it would exist with the umask's mode until a chmod) and its
// mode never changes after it appears, so the 0600 it has now is the mode
// it appeared with. The 0700 directory it was bound in is created and
// removed again. Under umask 0 the old bind-then-chmod fails this.
func TestListenUnixNeverWider(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, staleFirst := range []bool{false, true} {
		dir := testbin.ShortDir(t)
		p := filepath.Join(dir, "s.sock")
		if staleFirst {
			st, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			st.SetUnlinkOnClose(false)
			st.Close()
		}
		events := watchDir(t, dir)
		ln, err := ListenUnix(p)
		if err != nil {
			t.Fatal(err)
		}
		evs := events()
		var appeared, privMade, privGone bool
		for _, e := range evs {
			switch {
			case e.name == "s.sock" && e.mask&unix.IN_MOVED_TO != 0:
				appeared = true
			case e.name == "s.sock" && e.mask&(unix.IN_CREATE|unix.IN_ATTRIB) != 0:
				t.Errorf("stale=%v: the socket was created or changed in place (%#x): it was reachable before it was 0600", staleFirst, e.mask)
			case strings.HasPrefix(e.name, privateDirPrefix) && e.mask&unix.IN_CREATE != 0 && e.mask&unix.IN_ISDIR != 0:
				privMade = true
			case strings.HasPrefix(e.name, privateDirPrefix) && e.mask&unix.IN_DELETE != 0:
				privGone = true
			}
		}
		if !appeared || !privMade || !privGone {
			t.Errorf("stale=%v: events %+v: want the socket moved in and a private directory made and removed", staleFirst, evs)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil || st.Mode&0o777 != 0o600 {
			t.Errorf("stale=%v: mode %o %v, want 0600", staleFirst, st.Mode&0o777, err)
		}
		ln.Close()
	}
}
