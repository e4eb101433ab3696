package clientrun

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// threadSleeperEnv makes the test binary, run again, a multithreaded
// process whose wake-ups are all on a thread other than its main one (as
// nbdkit's are, a thread per connection): it sleeps sleeperNaps times on
// a thread of its own and says "ready". With threadSleeperEnv=exit, a
// line on stdin then ends that thread (its switches leave /proc with it)
// and it says "gone" once /proc no longer lists it; it exits when stdin
// closes.
const threadSleeperEnv = "NBDSCOPE_THREAD_SLEEPER"

const sleeperNaps = 300

func init() {
	mode := os.Getenv(threadSleeperEnv)
	if mode == "" {
		return
	}
	runtime.LockOSThread() // main stays on the main thread, so the naps are on another
	ready, end := make(chan struct{}), make(chan struct{})
	var napper int // the napping thread's id
	go func() {
		// Locked and never unlocked: the thread lives as long as this
		// goroutine, and ends with it.
		runtime.LockOSThread()
		napper = syscall.Gettid()
		for range sleeperNaps {
			time.Sleep(time.Millisecond)
		}
		close(ready)
		<-end
	}()
	<-ready
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	if mode == "exit" {
		in.ReadString('\n')
		close(end)
		// That thread, not a count of threads: the runtime may start
		// another as it ends, and the count then never falls. Bounded:
		// the thread is gone within a few scheduler ticks.
		task := fmt.Sprintf("/proc/self/task/%d", napper)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Stat(task); err != nil {
				break
			}
		}
		fmt.Println("gone")
	}
	in.ReadString('\n')
	os.Exit(0)
}

func tasksOf(pid int) []os.DirEntry {
	ts, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return ts
}

// sleeper is a started thread sleeper.
type sleeper struct{ *testbin.Helper }

// startSleeper starts the test binary as a thread sleeper in mode ("1" or
// "exit"), in a process group of its own (what a Group follows), and
// waits for its "ready"; it is killed when the test ends.
func startSleeper(t *testing.T, mode string) *sleeper {
	t.Helper()
	cmd := testbin.HelperCommand(os.Args[0], threadSleeperEnv, mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &sleeper{testbin.StartHelper(t, cmd)}
	s.expect(t, "ready")
	return s
}

func (s *sleeper) expect(t *testing.T, word string) {
	t.Helper()
	if line := s.Line(t); line != word {
		t.Fatalf("the helper said %q, want %q", line, word)
	}
}

// TestGroupUsageCountsEveryThreadsSwitches: a process's wake-ups are
// those of all its threads, not only its main thread's (/proc/PID/status):
// a real server such as nbdkit, which serves each connection on a thread
// of its own, showed 0 wake-ups per 2 MiB.
func TestGroupUsageCountsEveryThreadsSwitches(t *testing.T) {
	s := startSleeper(t, "1")
	u, ok := NewGroup(s.Cmd.Process.Pid).Usage()
	if !ok {
		t.Skip("/proc cannot be read")
	}
	// Each nap parks the thread: a voluntary switch. Some may be merged
	// by the runtime's timers, never most of them.
	if u.Nvcsw < sleeperNaps/2 {
		t.Errorf("%d voluntary switches for a process whose second thread slept %d times, want at least %d", u.Nvcsw, sleeperNaps, sleeperNaps/2)
	}
}

// TestGroupSwitchesNeverGoBackWhenAThreadExits: a thread that exits takes
// its switches out of /proc; the Group keeps its last reading, so the
// figure does not fall (the exec side's and the real server's counters
// would stall at the old maximum until the others made it up).
func TestGroupSwitchesNeverGoBackWhenAThreadExits(t *testing.T) {
	s := startSleeper(t, "exit")
	g := NewGroup(s.Cmd.Process.Pid)
	before, ok := g.Usage()
	if !ok {
		t.Skip("/proc cannot be read")
	}
	if before.Nvcsw < sleeperNaps/2 {
		t.Fatalf("%d voluntary switches before the thread exits, want at least %d", before.Nvcsw, sleeperNaps/2)
	}
	fmt.Fprintln(s.Stdin, "end the thread")
	s.expect(t, "gone")
	// The scenario: /proc alone has lost the thread's switches.
	if once, _ := GroupUsage(s.Cmd.Process.Pid); once.Nvcsw >= before.Nvcsw {
		t.Fatalf("a fresh reading has %d voluntary switches, %d before the thread exited: it did not leave /proc, nothing tested", once.Nvcsw, before.Nvcsw)
	}
	after, ok := g.Usage()
	if !ok {
		t.Fatal("/proc cannot be read after the thread exited")
	}
	if after.Nvcsw < before.Nvcsw || after.Nivcsw < before.Nivcsw {
		t.Errorf("switches went back when a thread exited: %d+%d, then %d+%d", before.Nvcsw, before.Nivcsw, after.Nvcsw, after.Nivcsw)
	}
}
