package ui

import (
	"testing"

	"nbdscope/model"
)

// TestMetricsAreTableEntries: every charted metric reads an entry of the
// table of figures (an empty or unknown name would chart nothing).
func TestMetricsAreTableEntries(t *testing.T) {
	for m, name := range metricFigure {
		if _, ok := model.LookupFigure(name); !ok {
			t.Errorf("metric %d charts %q, not in the table of figures", m, name)
		}
	}
}
