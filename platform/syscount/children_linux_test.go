package syscount

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
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
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), helperEnv+"=writes")
	if err := child.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for range parentWrites {
		unix.Write(childrenFD, []byte{0})
	}
	fmt.Println("done")
	io.Copy(io.Discard, in)
	return 0
}

func writesHelper() int {
	for range childWrites {
		unix.Write(childrenFD, []byte{0})
	}
	return 0
}

// TestChildren: with Options.Children, the calls of a process the target
// starts after Open count too, none of them missed (the child's are
// counted from its first instruction); without it, only the target's.
func TestChildren(t *testing.T) {
	needCounting(t)
	eachMechanism(t, func(t *testing.T) {
		for _, children := range []bool{true, false} {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=fork")
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(stdout)
			if line, err := out.ReadString('\n'); line != "ready\n" {
				t.Fatalf("fork helper said %q: %v", line, err)
			}
			c := mustOpen(t, cmd.Process.Pid, Options{FDs: []int{childrenFD}, Children: children, Calls: []Syscall{Write}})
			io.WriteString(stdin, "go\n")
			if line, err := out.ReadString('\n'); line != "done\n" {
				t.Fatalf("fork helper said %q: %v", line, err)
			}
			got := mustRead(t, c).Of[Write].Calls
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
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
