package testbin

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// The /proc readers on a child of this test: its parent is this process,
// its command line is found by a word in it, and once it has exited and
// before it is reaped it is a zombie, which ProcsWith and ChildPIDs leave
// out.
func TestProcReaders(t *testing.T) {
	if _, ppid, err := ProcStat(os.Getpid()); err != nil || ppid != os.Getppid() {
		t.Fatalf("ProcStat(self) = ppid %d, %v; want %d", ppid, err, os.Getppid())
	}
	mark := "testbin-procs-" + t.Name()
	cmd := exec.Command("/bin/sh", "-c", "read x", mark)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	Start(t, cmd)
	pid := cmd.Process.Pid
	if ps := ProcsWith(mark); len(ps) != 1 || ps[0].PID != pid || ps[0].Argv[0] != "/bin/sh" {
		t.Fatalf("ProcsWith(%q) = %+v, want PID %d", mark, ps, pid)
	}
	if kids, err := ChildPIDs(os.Getpid()); err != nil || !slices.Contains(kids, pid) {
		t.Fatalf("ChildPIDs = %v, %v; want %d among them", kids, err, pid)
	}
	in.Close() // read sees EOF: sh exits, unreaped
	for i := 0; ; i++ {
		if state, _, err := ProcStat(pid); err == nil && state == 'Z' {
			break
		}
		if i == 1000 {
			t.Fatal("the child never became a zombie")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ps := ProcsWith(mark); len(ps) != 0 {
		t.Errorf("ProcsWith lists a zombie: %+v", ps)
	}
	if kids, _ := ChildPIDs(os.Getpid()); slices.Contains(kids, pid) {
		t.Errorf("ChildPIDs lists a zombie: %v", kids)
	}
}
