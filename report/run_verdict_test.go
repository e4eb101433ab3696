package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/model"
)

// run -t 5 -P 2 -w 2m printed "the client waited on the server; its size
// does not matter here; the client used all of its 1 core (0.96 cores
// busy): its own work, not waiting, sets the pace here": the buffer
// empty 90% of the time while the client's core was full. Its pace line
// is the one verdict's words now, and says the server kept up.
func TestRunPaceLineAgreesWithItself(t *testing.T) {
	var s model.Summary
	s.Settings.SndBuf = "2m"
	s.Client.CoresBusy = 0.96
	s.Server = &model.Process{CoresBusy: 0.5}
	s.Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
	s.SetFill(model.Fill{Samples: 800, FullPct: 2, EmptyPct: 90, Bytes: 1 << 10, Limit: 4 << 20})
	var b bytes.Buffer
	printRunNotes(&b, model.Report{Sides: []model.SideReport{{Name: "A", Summary: s}}})
	out := b.String()
	if !strings.Contains(out, "pace A (2m): the buffer was empty 90% of the time: the server kept up with the client, whose own work sets the pace") ||
		strings.Contains(out, "the client waited on the server") {
		t.Errorf("run notes:\n%s", out)
	}
}
