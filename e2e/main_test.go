package e2e

import (
	"fmt"
	"os"
	"testing"

	"nbdscope/internal/testbin"
)

// nbdscopeBin is the binary TestMain builds.
var nbdscopeBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	bin, cleanup, err := testbin.Build("nbe2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer cleanup()
	nbdscopeBin = bin
	return m.Run()
}

// need skips the test when a tool is missing, or fails it when
// NBDSCOPE_INTEROP=1 asks for every test to run (as interop/ does).
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testbin.Need(t, "apt-get install "+tool, tool)
	}
}
