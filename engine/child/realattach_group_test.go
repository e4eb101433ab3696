package child

import (
	"os/exec"
	"strings"
	"testing"

	"nbdscope/engine/wire"
)

// A --target's server that shares its process group (started in the
// background of a script) is refused with why and with the fix: the
// message said only that its CPU could not be told from its group's.
func TestAttachNotAGroupLeaderSaysTheFix(t *testing.T) {
	cmd := exec.Command("sleep", "30") // in the test's process group: not its leader
	if err := cmd.Start(); err != nil {
		t.Skipf("sleep: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	_, _, err := attachRealServerRole(wire.ServerSpec{AttachPID: cmd.Process.Pid})
	if err == nil || !strings.Contains(err.Error(), "does not lead its own process group") || !strings.Contains(err.Error(), "setsid") {
		t.Errorf("attach to a process that does not lead its group: %v, want why and the fix (setsid)", err)
	}
}
