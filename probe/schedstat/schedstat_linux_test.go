package schedstat

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func skipUnsupported(t *testing.T) {
	t.Helper()
	var u *Unavailable
	if err := Supported(); errors.As(err, &u) {
		t.Skipf("no schedstat here: %v", err)
	}
}

// start runs a command for the test and kills it at the end.
func start(t *testing.T, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Skipf("%s: %v", name, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// processCPU reads process pid's CPU clock, by hand: clock_gettime on
// the clock the kernel gives each process (MAKE_PROCESS_CPUCLOCK(pid,
// CPUCLOCK_SCHED)).
func processCPU(t *testing.T, pid int) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32((^pid)<<3|2), &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// readOne reads the one thread of process pid.
func readOne(t *testing.T, pid int) Thread {
	t.Helper()
	th, err := readThread(fmt.Sprintf("/proc/%d/task", pid), pid, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestThreadPartsSumToWall: over 2 s, a busy process's one
// thread (a shell loop, always runnable) has run and wait fill its wall
// time, a sleeping one's sleep and wait do, each within 2%; the wall is
// the interval the test timed, within 2%; the busy thread's run is what
// its process's CPU clock read by hand, within 2%. (A goroutine's thread
// will not do for the busy one: when the runtime preempts a goroutine
// locked to its thread, the thread sleeps until the goroutine gets a P
// again, and the kernel counts that as sleep.)
func TestThreadPartsSumToWall(t *testing.T) {
	skipUnsupported(t)
	busy := start(t, "sh", "-c", "while :; do :; done")
	sleeper := start(t, "sleep", "30")
	// Each process's wall is timed by the test from just after one
	// reading of it to just after the next, as At is taken.
	read := func(pid int) (Snapshot, time.Time) {
		sn, err := ReadTree(pid)
		if err != nil {
			t.Fatal(err)
		}
		return sn, time.Now()
	}
	hand0, th0 := processCPU(t, busy), readOne(t, busy)
	b0, tb0 := read(busy)
	s0, ts0 := read(sleeper)
	time.Sleep(2 * time.Second)
	b1, tb1 := read(busy)
	s1, ts1 := read(sleeper)
	th1, hand1 := readOne(t, busy), processCPU(t, busy)
	b, s := b1.Sub(b0)[busy], s1.Sub(s0)[sleeper]
	t.Logf("busy %+v\nsleeper %+v", b, s)
	for _, c := range []struct {
		name     string
		x        Times
		interval time.Duration
	}{{"busy", b, tb1.Sub(tb0)}, {"sleeping", s, ts1.Sub(ts0)}} {
		x := c.x
		if x.Threads != 1 || x.Run+x.Wait+x.Sleep != x.Wall {
			t.Errorf("%s: %d threads, run %v + wait %v + sleep %v ≠ wall %v", c.name, x.Threads, x.Run, x.Wait, x.Sleep, x.Wall)
		}
		if d := x.Wall - c.interval; d < -c.interval/50 || d > c.interval/50 {
			t.Errorf("%s: wall %v, the test timed %v (more than 2%% apart)", c.name, x.Wall, c.interval)
		}
	}
	// A wait under way when schedstat is read is counted once it ends,
	// so each end of the interval can leave one scheduling delay of the
	// busy thread's wait in its sleep: 2 s keep that under 2%.
	if b.Run+b.Wait < b.Wall*98/100 {
		t.Errorf("busy: run %v + wait %v under 98%% of wall %v", b.Run, b.Wait, b.Wall)
	}
	if s.Sleep+s.Wait < s.Wall*98/100 || s.Run > s.Wall/50 {
		t.Errorf("sleeping: sleep %v + wait %v under 98%% of wall %v, or ran %v", s.Sleep, s.Wait, s.Wall, s.Run)
	}
	run, hand := th1.Run-th0.Run, hand1-hand0
	t.Logf("busy thread: schedstat ran %v, its process's CPU clock %v", run, hand)
	if d := run - hand; d > hand/50 || d < -hand/50 {
		t.Errorf("busy: schedstat ran %v, its CPU clock %v (more than 2%% apart)", run, hand)
	}
}

// TestTreeLifetime: a child shell and its sleeping child are both in the
// tree, and the sleeper's lifetime is almost all sleep.
func TestTreeLifetime(t *testing.T) {
	skipUnsupported(t)
	cmd := exec.Command("sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		time.Sleep(100 * time.Millisecond)
		s, err := ReadTree(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		life := s.Lifetime()
		if len(s.Procs) == 2 && life[s.Procs[1].PID].Wall >= 600*time.Millisecond {
			sl := life[s.Procs[1].PID]
			// Asleep or, starting on a loaded machine, waiting for a core
			// (35 ms of 617 at load average 19): never running.
			if s.Procs[1].PPID != cmd.Process.Pid || sl.Sleep+sl.Wait < sl.Wall*95/100 || sl.Run > sl.Wall/20 {
				t.Errorf("sleep's process %+v: %+v, want a child of %d asleep or waiting ≥95%% of its wall", s.Procs[1], sl, cmd.Process.Pid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree of %d never showed its sleeping child: %+v", cmd.Process.Pid, s.Procs)
		}
	}
}

// BenchmarkCounterRead is one poll's read of a process's threads (this
// test binary's), the cost each child adds to its poll.
func BenchmarkCounterRead(b *testing.B) {
	var c Counter
	pid := os.Getpid()
	for b.Loop() {
		if _, _, err := c.Read(pid); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(ReadPIDs(pid).Procs[0].Threads)), "threads")
}

// BenchmarkReadPIDsFresh is the same read with every thread's start read
// again (as a first read, or ReadTree, does): the ratio to
// BenchmarkCounterRead is what keeping the starts saves.
func BenchmarkReadPIDsFresh(b *testing.B) {
	pid := os.Getpid()
	for b.Loop() {
		Supported()
		ReadPIDs(pid)
	}
}

// A Counter whose processes were never found reads no span (not
// measured, n/a), where one whose processes have gone goes on counting
// the span (nothing ran: 0 is measured).
func TestCounterSpanStartsWithAProcess(t *testing.T) {
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	var none, self Counter
	for range 3 {
		if _, span, _ := none.Read(); span != 0 {
			t.Fatalf("no process: span %v, want 0", span)
		}
		self.Read(os.Getpid())
		time.Sleep(5 * time.Millisecond)
	}
	_, before, _ := self.Read(os.Getpid())
	time.Sleep(5 * time.Millisecond)
	tot, after, _ := self.Read()
	if before <= 0 || after <= before || tot.Run <= 0 {
		t.Errorf("span %v then %v with its process gone, run %v: want it to go on", before, after, tot.Run)
	}
}
