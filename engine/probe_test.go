package engine

import (
	"os"
	"os/exec"
	"testing"

	"nbdscope/nbd"
)

func probeSocket(n int) (int, int, error) { return nbd.ProbeSocketBuffer("unix", nbd.SendBuf, n) }

func needTool(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		if os.Getenv("NBDSCOPE_INTEROP") == "1" {
			t.Fatalf("%s not installed (NBDSCOPE_INTEROP=1 requires it)", path)
		}
		t.Skipf("%s not installed (apt-get install strace time)", path)
	}
}
