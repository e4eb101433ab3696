package sweep

import (
	"testing"

	"nbdscope/engine/child"
	"nbdscope/internal/childtest"
	"nbdscope/platform"
)

// TestMain: the test binary doubles as nbdscope for the children a sweep
// starts (child.RunChild), and no test leaves a goroutine behind.
func TestMain(m *testing.M) { childtest.Main(m, child.RunChild) }

var testFacts = platform.Facts{OS: "linux", Cores: 8}
