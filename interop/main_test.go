package interop

import (
	"fmt"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/probe/syscount"
)

// Bounds that keep a broken tool or server from hanging the suite.
const (
	cmdTimeout   = 60 * time.Second // any one external command
	startTimeout = 15 * time.Second // a server's socket must accept by then (patient: CI runs every package at once)
	stopTimeout  = 15 * time.Second // SIGTERM → exit, else SIGKILL
	procLifetime = 5 * time.Minute  // hard cap on a server child
	mib          = 1 << 20
	exportSize   = 64 * mib // the default export of startServe
)

// nbdscopeBin is the binary TestMain builds.
var nbdscopeBin string

func TestMain(m *testing.M) { testbin.Main(m, "nbdscope-interop-", &nbdscopeBin) }

// need skips the test when a tool is missing, or fails it when
// NBDSCOPE_INTEROP=1 asks for every interop test to run.
func need(t testing.TB, tools ...string) {
	t.Helper()
	testbin.Need(t, "apt-get install qemu-utils libnbd-bin nbdkit fio", tools...)
}

// needCounting skips a test whose figures are counted system calls where
// they cannot be counted (syscount.Probe says why), or fails it under
// NBDSCOPE_INTEROP=1, as syscount's own tests do: CI mounts tracefs, and
// a skip there would pass the agreement tests unrun.
func needCounting(t testing.TB) {
	t.Helper()
	if err := syscount.Probe(); err != nil {
		testbin.Require(t, fmt.Errorf("system calls cannot be counted here: %w", err))
	}
}
