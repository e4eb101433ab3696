package clientrun

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// touchMiB is how much fresh memory the fault tests' dd fills: its buffer
// (bs) is allocated once and read into, one fault per 4 KiB page.
const touchMiB = 64

// wantFaults is the fewest minor faults a dd that fills touchMiB must
// show: half its pages, unless transparent huge pages are "always", when a
// 2 MiB page takes one fault and only the presence of faults is checked.
func wantFaults(t *testing.T) int64 {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err == nil && strings.Contains(string(b), "[always]") {
		t.Log("transparent huge pages always: checking only that faults are counted")
		return 1
	}
	return touchMiB << 20 / 4096 / 2
}

var ddTouch = []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1", "status=none"}

// TestRunCountsPageFaults: a run's minor page faults are its tree's, from
// wait4's rusage: a dd that fills 64 MiB of fresh memory shows them.
func TestRunCountsPageFaults(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skip("no dd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, []string{"/bin/sh", "-c", strings.Join(ddTouch, " ")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantFaults(t); res.MinFlt < want {
		t.Errorf("%d minor faults for a dd that filled %d MiB, want at least %d", res.MinFlt, touchMiB, want)
	}
}

// TestGroupUsageCountsPageFaults: a live exec side's faults come from
// /proc: those of the processes in the group and of the children they
// waited for (cminflt), here a dd its shell waited for.
func TestGroupUsageCountsPageFaults(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skip("no dd")
	}
	cmd := exec.Command("/bin/sh", "-c", strings.Join(ddTouch, " ")+"; exec sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	want := wantFaults(t)
	var u Result
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var ok bool
		if u, ok = GroupUsage(cmd.Process.Pid); !ok {
			t.Skip("/proc cannot be read")
		}
		if u.MinFlt >= want {
			return
		}
	}
	t.Fatalf("group usage %+v: want at least %d minor faults from the dd the shell waited for", u, want)
}
