package plot

import (
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
)

// A write run saved with the reading figure in its macOS mark (12.6x, as
// runs were before write sides had the writing one) is drawn with the
// series' writing figure, 9.2x, as a run saved now is.
func TestSVGOldWriteRunsMacOSMark(t *testing.T) {
	doc := SVG("macos-write-old", reporttest.MacOSWriteOld(t))
	if !strings.Contains(doc, "9.2x for qemu-img writing") || strings.Contains(doc, "12.6x") {
		t.Errorf("the old write run's SVG does not give the writing figure (9.2x), or still gives 12.6x")
	}
}
