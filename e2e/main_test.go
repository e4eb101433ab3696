package e2e

import (
	"testing"

	"nbdscope/internal/cutcheck"
	"nbdscope/internal/testbin"
)

// nbdscopeBin is the binary TestMain builds.
var nbdscopeBin string

func TestMain(m *testing.M) { testbin.Main(m, "nbe2e-bin-", &nbdscopeBin) }

// need skips the test when a tool is missing, or fails it when
// NBDSCOPE_INTEROP=1 asks for every test to run (as interop/ does).
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testbin.Need(t, "apt-get install "+tool, tool)
	}
}

// underTmuxAtEachSize runs an explorer test in tmux at each of the sizes
// the explorer must fit (cutcheck.Sizes), or skips it without tmux.
func underTmuxAtEachSize(t *testing.T, check func(t *testing.T, w, h int)) {
	t.Helper()
	need(t, "tmux")
	cutcheck.AtEachSize(t, check)
}
