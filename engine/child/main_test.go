package child

import (
	"testing"

	"nbdscope/internal/childtest"
)

// TestMain: the test binary doubles as nbdscope for the children the tests
// start (RunChild), and no test leaves a goroutine behind.
func TestMain(m *testing.M) { childtest.Main(m, RunChild) }
