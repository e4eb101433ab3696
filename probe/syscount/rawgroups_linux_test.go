package syscount

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkRawGroups measures the design Counter does not use, against
// the one it does (issue 23, "Cost"): the calls of one kind counted by one
// raw_syscalls counter whose filter names their syscall numbers, so that
// 12 counters a thread give realproc's figures instead of 24:
//   - per direction, the socket-only calls' entries and EAGAIN exits (2);
//   - read and readv (write and writev): entries on any fd and EAGAIN
//     exits by id (2), and entries on the data fds, which need each
//     call's own tracepoint, since a raw entry's fd is in args[], which a
//     filter cannot name (2).
//
// It reports "ratio" as BenchmarkOverhead does, for a ping-pong (a
// context switch per call: what fewer counters save) and a tight loop (no
// switch: what a raw counter costs, evaluated at every system call of
// the thread, counted or not). Not used because it is not exact for a
// 32-bit program on a 64-bit kernel (raw_syscalls see its calls with its
// own syscall numbers, which the filter would take for others), and
// because what it saves per switch it pays back per call in a process
// that makes several calls per wake-up.
func BenchmarkRawGroups(b *testing.B) {
	needCounting(b)
	if runtime.GOARCH != "amd64" {
		b.Skip("the syscall numbers below are amd64's")
	}
	for _, design := range []string{"raw12", "anyfd24"} {
		b.Run("pingpong/"+design, func(b *testing.B) {
			pingPong(b, nil, func(pair [2]int) *Counter { return openDesign(b, design, pair) })
		})
		b.Run("tight/"+design, func(b *testing.B) { tightLoop(b, openDesign, design) })
	}
}

// openDesign opens, disabled, the counters of a design on this process.
func openDesign(b *testing.B, design string, pair [2]int) *Counter {
	b.Helper()
	if design == "anyfd24" {
		c, err := Open(os.Getpid(), Options{FDs: pair[:], AnyFD: []Syscall{Recvfrom, Recvmsg, Recvmmsg, Sendto, Sendmsg, Sendmmsg}})
		if err != nil {
			b.Fatal(err)
		}
		c.setEnabled(false)
		return c
	}
	tp, err := loadTracepoints()
	if err != nil {
		b.Fatal(err)
	}
	enter, exit := rawID(b, tp.dir, "sys_enter"), rawID(b, tp.dir, "sys_exit")
	ids := func(nrs ...int) string {
		var f []string
		for _, n := range nrs {
			f = append(f, "id == "+strconv.Itoa(n))
		}
		return "(" + strings.Join(f, " || ") + ")"
	}
	onFDs := fmt.Sprintf("fd == %d || fd == %d", pair[0], pair[1])
	var evs []event
	for _, g := range [][]int{{unix.SYS_RECVFROM, unix.SYS_RECVMSG, unix.SYS_RECVMMSG}, {unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_SENDMMSG},
		{unix.SYS_READ, unix.SYS_READV}, {unix.SYS_WRITE, unix.SYS_WRITEV}} {
		evs = append(evs, event{id: enter, filter: ids(g...)}, event{id: exit, filter: ids(g...) + " && ret == -11"})
	}
	for _, s := range []Syscall{Read, Readv, Write, Writev} {
		evs = append(evs, event{id: tp.enter[s], filter: onFDs})
	}
	c := &Counter{pid: os.Getpid(), tp: tp, mode: mode{userOnly: userOnlyWorks(tp)}}
	if c.base, err = c.attach(evs, false); err != nil {
		b.Fatal(err)
	}
	return c
}

func rawID(b *testing.B, dir, name string) uint64 {
	raw, err := os.ReadFile(filepath.Join(dir, "events", "raw_syscalls", name, "id"))
	if err != nil {
		b.Skip(err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return id
}
