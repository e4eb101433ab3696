package engine

import (
	"testing"

	"nbdscope/internal/testbin"
	"nbdscope/nbd"
)

func probeSocket(n int) (int, int, error) { return nbd.ProbeSocketBuffer("unix", nbd.SendBuf, n) }

func needTool(t *testing.T, path string) {
	t.Helper()
	testbin.Need(t, "apt-get install strace time qemu-utils nbdkit", path)
}
