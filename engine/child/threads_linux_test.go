package child

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSwitches is a thread's voluntary + involuntary context switches,
// read from /proc with raw system calls: a read through the runtime's
// syscall entry would itself wake sysmon from its deep sleep, the very
// thing the test counts.
func rawSwitches(tid int) (uint64, bool) {
	path := append([]byte("/proc/self/task/"+strconv.Itoa(tid)+"/status"), 0)
	cwd := unix.AT_FDCWD
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return 0, false
	}
	defer unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	var buf [4096]byte
	n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if e != 0 {
		return 0, false
	}
	return ctxtSwitches(string(buf[:n])), true
}

// ctxtSwitches is a /proc status file's voluntary + involuntary context
// switches.
func ctxtSwitches(status string) uint64 {
	var sum uint64
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "voluntary_ctxt_switches") {
			x, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			sum += x
		}
	}
	return sum
}

// tids lists this process's threads.
func tids(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
