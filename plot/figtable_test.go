package plot

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

// TestLegendsFromTheTable: the SVG's legends come from the table of
// figures, as they read before it.
func TestLegendsFromTheTable(t *testing.T) {
	want := [][]string{{""}, {""}, {"client", "server"}, {"full", "empty"}}
	for i, r := range svgRows {
		if len(r.labels) != len(want[i]) || r.labels[0] != want[i][0] || r.labels[len(r.labels)-1] != want[i][len(want[i])-1] {
			t.Errorf("%s: legends %q, want %q", r.id, r.labels, want[i])
		}
	}
}
