package child

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCommandsLeaveTheRuntimeAsleep: in a process of one processor whose
// runtime is idle (sysmon asleep, as in a paused load), eight commands
// arrive on a non-blocking pipe from another process, 30 ms apart, each
// followed by 5 ms of work, as a measurement follows its command. Read
// through the runtime's syscall entry, each read woke sysmon into its
// 20 µs ticks for the work that followed (41-76 switches a command); read
// raw, it stays asleep (1.8-3.0). The switches are read raw
// (rawSwitches) for the same reason.
func TestCommandsLeaveTheRuntimeAsleep(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	rf, wf := os.NewFile(uintptr(fds[0]), "commands"), os.NewFile(uintptr(fds[1]), "controller")
	defer rf.Close()
	const commands = 8
	cmd := exec.Command("sh", "-c", `sleep 0.2; for i in 1 2 3 4 5 6 7 8; do echo '{}'; sleep 0.03; done`)
	cmd.Stdout = wf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	wf.Close()
	in := commandReader(rf)
	got := make(chan int)
	go func() {
		defer close(got)
		buf := make([]byte, 64)
		for {
			n, err := in.Read(buf)
			if err != nil {
				return
			}
			for start := time.Now(); time.Since(start) < 5*time.Millisecond; {
			}
			got <- n
		}
	}()
	ids := tids(t)
	// The system calls above woke sysmon into its 20 µs ticks, and it
	// leaves them only in ticks that find the processor busy: 50 ms of
	// work take it to its 10 ms ones, before the first command.
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	before := map[int]uint64{}
	for _, id := range ids {
		before[id], _ = rawSwitches(id)
	}
	for range commands {
		select {
		case n := <-got:
			if n != 3 {
				t.Fatalf("read %d bytes, want 3", n)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the command was not read")
		}
	}
	var sum uint64
	for _, id := range ids {
		if n, ok := rawSwitches(id); ok {
			sum += n - before[id]
		}
	}
	perCommand := float64(sum) / commands
	t.Logf("%d commands: the process's threads switched %d times (%.1f a command)", commands, sum, perCommand)
	if perCommand > 15 {
		t.Errorf("the threads switched %.1f times a command, want at most 15: reading a command wakes sysmon", perCommand)
	}
	if _, ok := <-got; ok {
		t.Fatal("a read after the pipe closed returned data")
	}
}
