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

// TestSeriesLabelsFromTheTable: the legends' words come from the table
// of figures, as the explorer has always shown them.
func TestSeriesLabelsFromTheTable(t *testing.T) {
	for _, c := range []struct {
		d    chartDef
		want [2]string
	}{{chartCPU, [2]string{"cli", "srv"}}, {chartLatency, [2]string{"p50", "p99"}},
		{chartWakeups, [2]string{"cli", "srv"}}, {chartFill, [2]string{"full", "empty"}}} {
		if len(c.d.series) != 4 {
			t.Fatalf("%s: %d series", c.d.name, len(c.d.series))
		}
		for i, s := range c.d.series {
			if s.label != c.want[i%2] || s.side != i/2 || s.dashed != (i%2 == 1) {
				t.Errorf("%s series %d: %+v, want label %q", c.d.name, i, s, c.want[i%2])
			}
		}
	}
}
