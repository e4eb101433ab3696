package interop

// An independent look at a real process's socket buffers: its own
// pidfd_getfd copies of the process's sockets and getsockopt on them,
// not nbdscope's code (probe/sockctl), to check that a live change
// reached the real socket.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
	"nbdscope/model"
)

// sockBufs are one connected socket's SO_SNDBUF and SO_RCVBUF as
// getsockopt reads them.
type sockBufs struct{ snd, rcv int }

// dataSocketBufs are the buffers of pid's connected stream sockets (not
// its listeners), read through copies of its fds.
func dataSocketBufs(pid int) []sockBufs {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pidfd)
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(dir)
	var out []sockBufs
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err != nil || !strings.HasPrefix(l, "socket:") {
			continue
		}
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dup, err := unix.PidfdGetfd(pidfd, fd, 0)
		if err != nil {
			continue
		}
		listening, _ := unix.GetsockoptInt(dup, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
		typ, _ := unix.GetsockoptInt(dup, unix.SOL_SOCKET, unix.SO_TYPE)
		if _, perr := unix.Getpeername(dup); listening == 0 && typ == unix.SOCK_STREAM && perr == nil {
			snd, _ := unix.GetsockoptInt(dup, unix.SOL_SOCKET, unix.SO_SNDBUF)
			rcv, _ := unix.GetsockoptInt(dup, unix.SOL_SOCKET, unix.SO_RCVBUF)
			out = append(out, sockBufs{snd, rcv})
		}
		unix.Close(dup)
	}
	return out
}

// pidsWith are the processes whose command line holds s.
func pidsWith(s string) []int {
	var out []int
	for _, p := range testbin.ProcsWith(s) {
		out = append(out, p.PID)
	}
	return out
}

// anySocket is a runWatching condition: one of the sockets has want.
func anySocket(want func(sockBufs) bool) func([]sockBufs) bool {
	return func(bufs []sockBufs) bool {
		for _, b := range bufs {
			if want(b) {
				return true
			}
		}
		return false
	}
}

// runWatching is runReport while the data sockets of the processes whose
// command line holds marker are looked at every 20 ms, until seen holds
// for one of them or the run ends; it says whether it did, and what the
// last look found.
func runWatching(t *testing.T, marker string, seen func([]sockBufs) bool, args ...string) (model.Report, envResult, bool, []sockBufs) {
	t.Helper()
	done := make(chan struct{})
	var mu sync.Mutex
	var ok bool
	var last []sockBufs
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, pid := range pidsWith(marker) {
				bufs := dataSocketBufs(pid)
				mu.Lock()
				if len(bufs) > 0 {
					last = bufs
				}
				ok = ok || seen(bufs)
				stop := ok
				mu.Unlock()
				if stop {
					return
				}
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	rep, r := runReport(t, 0, args...)
	close(done)
	wg.Wait()
	return rep, r, ok, last
}

// eventOf is side's last event of setting, nil for none.
func eventOf(rep model.Report, side model.SideID, setting string) *model.Event {
	var ev *model.Event
	for i, e := range rep.Events {
		if e.Side == side && e.Setting == setting {
			ev = &rep.Events[i]
		}
	}
	return ev
}
