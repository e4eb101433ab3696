package clientrun

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadSleeperEnv makes the test binary, run again, a multithreaded
// process whose wake-ups are all on a thread other than its main one (as
// nbdkit's are, a thread per connection): it sleeps sleeperNaps times on
// a thread of its own, says "ready" and waits on stdin.
const threadSleeperEnv = "NBDSCOPE_THREAD_SLEEPER"

const sleeperNaps = 300

func init() {
	if os.Getenv(threadSleeperEnv) == "" {
		return
	}
	runtime.LockOSThread() // main stays on the main thread, so the naps are on another
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // the thread stays alive (locked, never unlocked) until exit
		for range sleeperNaps {
			time.Sleep(time.Millisecond)
		}
		close(done)
		select {}
	}()
	<-done
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// TestGroupUsageCountsEveryThreadsSwitches: a process's wake-ups are
// those of all its threads (/proc/PID/task/*/status), not only its main
// thread's (/proc/PID/status): a real server such as nbdkit, which serves
// each connection on a thread of its own, showed 0 wake-ups per 2 MiB.
func TestGroupUsageCountsEveryThreadsSwitches(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), threadSleeperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the helper said %q: %v", line, err)
	}
	u, ok := GroupUsage(cmd.Process.Pid)
	if !ok {
		t.Skip("/proc cannot be read")
	}
	// Each nap parks the thread: a voluntary switch. Some may be merged
	// by the runtime's timers, never most of them.
	if u.Nvcsw < sleeperNaps/2 {
		t.Errorf("%d voluntary switches for a process whose second thread slept %d times, want at least %d", u.Nvcsw, sleeperNaps, sleeperNaps/2)
	}
}
