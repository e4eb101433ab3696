package syscount

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// childrenFD is the fd number the fork helper and its child write to: no
// process here has it open, so every write is entered (and fails EBADF)
// and none is anyone else's.
const childrenFD = 1000

// childWrites and parentWrites are how many writes each makes.
const (
	childWrites  = 250
	parentWrites = 70
)

// forkHelper waits for "go", starts a child (this binary as writesHelper)
// and waits for it, makes its own writes, says "done" and waits for EOF.
func forkHelper() int {
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	if line, _ := in.ReadString('\n'); line != "go\n" {
		return 2
	}
	if err := testbin.HelperCommand(os.Args[0], helperEnv, "writes").Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fd, done := writeTarget()
	defer done()
	for range parentWrites {
		unix.Write(fd, []byte{0})
	}
	fmt.Println("done")
	io.Copy(io.Discard, in)
	return 0
}

func writesHelper() int {
	fd, done := writeTarget()
	defer done()
	for range childWrites {
		unix.Write(fd, []byte{0})
	}
	return 0
}

// writeTarget is where the fork helper and its child write: childrenFD,
// or, with HELPER_SOCKETS=1 (inherited by the child), a non-blocking
// socketpair of the writer's own, so that the socket layer sees each
// write (Options.Sockets); one that finds the buffer full still counts,
// as EAGAIN.
func writeTarget() (fd int, done func()) {
	if os.Getenv("HELPER_SOCKETS") != "1" {
		return childrenFD, func() {}
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return pair[0], func() { unix.Close(pair[0]); unix.Close(pair[1]) }
}

// TestChildren: with Options.Children, the calls of a process the target
// starts after Open count too, none of them missed (the child's are
// counted from its first instruction); without it, only the target's.
func TestChildren(t *testing.T) {
	needCounting(t)
	eachMechanism(t, func(t *testing.T) {
		for _, children := range []bool{true, false} {
			var c *Counter
			forkAndCount(t, func(pid int) {
				c = mustOpen(t, pid, Options{FDs: []int{childrenFD}, Children: children, Calls: []Syscall{Write}})
			})
			got := mustRead(t, c).Of[Write].Calls
			want := uint64(parentWrites)
			if c.Children() { // asked for, or forced by a kernel before 5.13 (perf)
				want += childWrites
			}
			if children && !c.Children() {
				t.Error("Children asked for, and Counter.Children says no")
			}
			if got != want {
				t.Errorf("children %v (counted: %v), %s: %d writes on fd %d, want %d", children, c.Children(), c.Mechanism(), got, childrenFD, want)
			}
			c.Close()
		}
	})
}

// forkAndCount starts the fork helper, calls open with its pid, lets it
// run (its child's writes, then its own) and waits for it to exit.
func forkAndCount(t *testing.T, open func(pid int), env ...string) {
	t.Helper()
	h := testbin.StartHelper(t, testbin.HelperCommand(os.Args[0], helperEnv, "fork", env...))
	if line := h.Line(t); line != "ready" {
		t.Fatalf("fork helper said %q", line)
	}
	open(h.Cmd.Process.Pid)
	io.WriteString(h.Stdin, "go\n")
	if line := h.Line(t); line != "done" {
		t.Fatalf("fork helper said %q", line)
	}
	h.Stdin.Close()
	h.Cmd.Wait()
}

// TestProcessFDs: fds given per process count in that process only when
// counting per process (the child's writes to its own fd 1000 are not the
// parent's fd 1000); per thread, a filter cannot name a process, and they
// count in every process counted.
func TestProcessFDs(t *testing.T) {
	needCounting(t)
	eachMechanism(t, func(t *testing.T) {
		var c *Counter
		forkAndCount(t, func(pid int) {
			c = mustOpen(t, pid, Options{Children: true, Calls: []Syscall{Write}})
			if err := c.SetProcessFDs(map[int][]int{pid: {childrenFD}}); err != nil {
				t.Fatal(err)
			}
		})
		got := mustRead(t, c).Of[Write].Calls
		want := uint64(parentWrites)
		if c.Mechanism() == PerThread {
			want += childWrites
		}
		if got != want {
			t.Errorf("%s: %d writes on the parent's fd %d, want %d", c.Mechanism(), got, childrenFD, want)
		}
		if fds := c.FDs(); len(fds) != 1 || fds[0] != childrenFD {
			t.Errorf("FDs() = %v", fds)
		}
		if err := c.SetProcessFDs(map[int][]int{0: {1}}); err == nil {
			t.Error("SetProcessFDs took pid 0")
		}
	})
}

// TestPerfStillCountsBesideBPF: while the bpf programs count a process,
// perf counters on the same tracepoints (a PerThread Counter, a user's
// `perf stat -e syscalls:…`) still see every call: the programs hand each
// call on.
func TestPerfStillCountsBesideBPF(t *testing.T) {
	needCounting(t)
	needBPF(t)
	h := startHelper(t, 2, 100)
	byBPF := mustOpen(t, h.pid, Options{FDs: h.fds, Mechanism: PerProcess})
	byPerf := mustOpen(t, h.pid, Options{FDs: h.fds, Mechanism: PerThread})
	byPair := h.run(t)
	var want selfCount
	for _, p := range byPair {
		want.add(p)
	}
	// The calls on the data fds, exactly, by both; on any fd they may
	// differ by the Go runtime's own calls between the two opens.
	checkAgainstSelf(t, mustRead(t, byBPF), want, true)
	checkAgainstSelf(t, mustRead(t, byPerf), want, true)
}
