package schedstat

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
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

// thread runs work on a locked OS thread of its own and reports its TID
// and its CPU time by the thread's own clock (the hand reading).
func thread(ready chan<- int, done <-chan struct{}, cpu chan<- time.Duration, work func(<-chan struct{})) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var t0, t1 unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
	ready <- unix.Gettid()
	work(done)
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
	cpu <- time.Duration(t1.Nano() - t0.Nano())
}

func spin(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
	}
}

func nap(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 20e6}, nil)
	}
}

// oneThread is s cut down to thread tid, as a process of its own.
func oneThread(t *testing.T, s Snapshot, tid int) Snapshot {
	t.Helper()
	for _, p := range s.Procs {
		for _, th := range p.Threads {
			if th.TID == tid {
				return Snapshot{At: s.At, Procs: []Process{{PID: tid, Threads: []Thread{th}}}}
			}
		}
	}
	t.Fatalf("thread %d not read", tid)
	return Snapshot{}
}

// threadCPU reads thread tid's CPU clock (of this process), by hand:
// clock_gettime on the clock the kernel gives each thread
// (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
func threadCPU(tid int) time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(int32((^tid)<<3|4|2), &ts)
	return time.Duration(ts.Nano())
}

// readOne reads thread tid of this process.
func readOne(t *testing.T, tid int) Thread {
	t.Helper()
	th, err := readThread("/proc/self/task", tid)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestThreadPartsSumToWall: over an interval, a busy thread's run and
// wait fill its wall time and a sleeping one's sleep does, each within
// 2%; the wall is the interval the test timed, within 2%; the busy
// thread's run is what its own CPU clock read by hand, within 2%.
func TestThreadPartsSumToWall(t *testing.T) {
	skipUnsupported(t)
	done := make(chan struct{})
	ready := make(chan int, 2)
	cpu := make(chan time.Duration, 2)
	go thread(ready, done, cpu, spin)
	busy := <-ready
	go thread(ready, done, cpu, nap)
	sleeper := <-ready
	defer func() { close(done); <-cpu; <-cpu }()

	hand0, th0 := threadCPU(busy), readOne(t, busy)
	before, err := ReadTree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(600 * time.Millisecond)
	after, err := ReadTree(os.Getpid())
	interval := time.Since(t0)
	th1, hand1 := readOne(t, busy), threadCPU(busy)
	if err != nil {
		t.Fatal(err)
	}
	b := oneThread(t, after, busy).Sub(oneThread(t, before, busy))[busy]
	s := oneThread(t, after, sleeper).Sub(oneThread(t, before, sleeper))[sleeper]
	t.Logf("busy %+v\nsleeper %+v\ninterval %v", b, s, interval)
	for name, x := range map[string]Times{"busy": b, "sleeping": s} {
		if x.Run+x.Wait+x.Sleep != x.Wall {
			t.Errorf("%s thread: run %v + wait %v + sleep %v ≠ wall %v", name, x.Run, x.Wait, x.Sleep, x.Wall)
		}
		if d := x.Wall - interval; d < -interval/50 || d > interval/50 {
			t.Errorf("%s thread: wall %v, the test timed %v (more than 2%% apart)", name, x.Wall, interval)
		}
	}
	if b.Run+b.Wait < b.Wall*98/100 {
		t.Errorf("busy thread: run %v + wait %v under 98%% of wall %v", b.Run, b.Wait, b.Wall)
	}
	// Woken every 20 ms, the sleeper may wait for a core each time on a
	// busy machine; it runs next to nothing.
	if s.Sleep+s.Wait < s.Wall*98/100 || s.Run > s.Wall/50 {
		t.Errorf("sleeping thread: sleep %v + wait %v under 98%% of wall %v, or ran %v", s.Sleep, s.Wait, s.Wall, s.Run)
	}
	run, hand := th1.Run-th0.Run, hand1-hand0
	t.Logf("busy thread: schedstat ran %v, its CPU clock %v", run, hand)
	if d := run - hand; d > hand/50 || d < -hand/50 {
		t.Errorf("busy thread: schedstat ran %v, its CPU clock %v (more than 2%% apart)", run, hand)
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
			if s.Procs[1].PPID != cmd.Process.Pid || sl.Sleep < sl.Wall*95/100 {
				t.Errorf("sleep's process %+v: %+v, want a child of %d asleep ≥95%% of its wall", s.Procs[1], sl, cmd.Process.Pid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree of %d never showed its sleeping child: %+v", cmd.Process.Pid, s.Procs)
		}
	}
}
