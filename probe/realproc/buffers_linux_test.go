package realproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"nbdscope/probe/sockctl"
)

// socketHolderEnv makes the test binary, run again, a process that holds
// a connected unix socketpair: it prints "PID fd fd" and waits on stdin.
const socketHolderEnv = "NBDSCOPE_REALPROC_SOCKET_HOLDER"

func TestMain(m *testing.M) {
	if os.Getenv(socketHolderEnv) != "" {
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println(os.Getpid(), pair[0], pair[1])
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBuffersOfAShellsChild: the sockets of a process the watched one
// started (a shell's real client) are changed too, through their own
// holder, read back from the real socket, and given their own value back.
func TestBuffersOfAShellsChild(t *testing.T) {
	if _, err := sockctl.Open(os.Getpid()); err != nil {
		t.Skipf("socket buffers cannot be changed from outside here: %v", err)
	}
	// The shell runs the holder as its child (not exec'd: "; exit").
	cmd := exec.Command("/bin/sh", "-c", `"$0" -test.run=^$; exit $?`, os.Args[0])
	cmd.Env = append(os.Environ(), socketHolderEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(line)
	if len(f) != 3 {
		t.Fatalf("the holder said %q", line)
	}
	child, _ := strconv.Atoi(f[0])
	fd, _ := strconv.Atoi(f[1])
	if child == cmd.Process.Pid {
		t.Fatal("the shell exec'd the holder: no child to test")
	}
	socks, err := WatchSockets(cmd.Process.Pid)
	if err != nil {
		t.Skipf("sock_diag: %v", err)
	}
	defer socks.Close()
	scan, err := socks.Scan()
	if err != nil {
		t.Fatal(err)
	}
	b := ControlBuffers(cmd.Process.Pid)
	defer b.Close()
	b.Track(scan.Data)
	reached, eff, err := b.Set(sockctl.SendBuf, 1<<20)
	if err != nil || reached != 2 || eff != 2<<20 {
		t.Fatalf("Set 1m: %d sockets reached, %d read back, %v; want the child's 2, 2m", reached, eff, err)
	}
	check, err := sockctl.Open(child)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if got, err := check.Get(fd, sockctl.SendBuf); err != nil || got != 2<<20 {
		t.Errorf("the child's socket has SO_SNDBUF %d (%v), want 2m", got, err)
	}
	own := b.Own(sockctl.SendBuf)
	if _, _, err := b.Set(sockctl.SendBuf, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := check.Get(fd, sockctl.SendBuf); got != own {
		t.Errorf("default: the child's socket has %d, want its own %d back", got, own)
	}
}
