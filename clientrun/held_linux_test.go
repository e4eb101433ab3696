package clientrun

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A held client has not exec'd when attach runs (its pid is still the
// hold's shell), and runs the command in that same pid once released.
func TestStartHeldHoldsBeforeExec(t *testing.T) {
	var comm string
	p, err := StartHeld([]string{"sh", "-c", "exit 0"}, func(pid int) {
		// cmdline reads "" for a moment around an exec (13 runs of 40 at
		// a load average of 8): read until it names a program, for at
		// most 2 s. A held process stays in the hold meanwhile.
		for deadline := time.Now().Add(2 * time.Second); comm == "" && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			comm = string(b)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(comm, holdScript) {
		t.Fatalf("at attach the process ran %q, want the hold", comm)
	}
	q, err := StartHeld([]string{"sh", "-c", "exit 3"}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("the released command's status: %v", err)
	}
	if _, err := StartHeld([]string{"no-such-program-nbdscope"}, func(int) { t.Error("attach ran for a missing program") }); err == nil {
		t.Fatal("a missing program started")
	}
}
