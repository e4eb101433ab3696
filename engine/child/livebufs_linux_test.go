package child

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"nbdscope/internal/testbin"
	"nbdscope/platform/sockctl"
)

// liveBufsHelperEnv makes the test binary, re-executed as another user,
// try to change a process's buffers as a role would (trySetAs).
const liveBufsHelperEnv = "NBDSCOPE_LIVEBUFS_HELPER_PID"

func init() {
	if s := os.Getenv(liveBufsHelperEnv); s != "" {
		pid, _ := strconv.Atoi(s)
		l, _ := watchBufs(pid, [2]int{}, "the client")
		m := l.set(sockctl.SendBuf, 1<<20, "the client")
		l.close()
		fmt.Printf("%s\t%s\n", m.Type, m.Err)
		os.Exit(0)
	}
}

// TestLiveBufsRefusalNamesReason: as nobody, changing the buffers of a
// root process (this one) is refused, and the reply names the reason and
// the fix, as a key press or --at then shows it; nothing is changed.
func TestLiveBufsRefusalNamesReason(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	bin := testbin.WorldExecutableCopy(t, "child")
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), liveBufsHelperEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"error\t", "the client's buffers cannot be changed", "runs as uid 0", "fix: sudo "} {
		if !strings.Contains(got, want) {
			t.Errorf("as nobody, on root's process: %q lacks %q", got, want)
		}
	}
}
