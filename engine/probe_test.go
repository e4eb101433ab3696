package engine

import (
	"testing"

	"nbdscope/internal/testbin"
)

func needTool(t *testing.T, path string) {
	t.Helper()
	testbin.Need(t, "apt-get install strace time qemu-utils nbdkit", path)
}
