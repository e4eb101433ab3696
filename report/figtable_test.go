package report

import (
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// TestSummaryRowsAreTheTable: run's summary has a row for every entry of
// the table of figures it marks, in model.SummaryFigures' order, with the
// entry's label and a B/A cell only where its ratio means something: a
// new entry needs no row written here.
func TestSummaryRowsAreTheTable(t *testing.T) {
	rep := reporttest.Report()
	if len(rep.Sides) != 2 {
		t.Fatalf("the shared report has %d sides, want 2", len(rep.Sides))
	}
	rows := SummaryTable(rep).Rows
	entries := model.SummaryFigures()
	if len(rows) < len(entries) {
		t.Fatalf("%d rows, %d entries", len(rows), len(entries))
	}
	for i, e := range entries {
		r := rows[i]
		if r[0] != e.Long {
			t.Errorf("row %d is %q, the table's entry %s is %q", i, r[0], e.Name(), e.Long)
		}
		if hasRatio := r[len(r)-1] != ""; hasRatio != e.Ratio {
			t.Errorf("%s: B/A cell %q, the entry's ratio means something: %v", e.Name(), r[len(r)-1], e.Ratio)
		}
		want := formatOf(e.Format)(e.Get(&rep.Sides[0].Summary.Figures))
		if r[1] != want {
			t.Errorf("%s: A's cell %q, the entry reads %q", e.Name(), r[1], want)
		}
	}
}
