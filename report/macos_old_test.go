package report

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/platform"
)

// A write run saved before write sides had the series' writing figure
// stored the reading one in its mark (12.6x, no series_case), and runs
// show, runs export and run's CSV gave it beside a write's B/A, where a
// run saved now gives 9.2x. The figure is the series' for the marked
// sides' workload, whenever the run was saved.
func TestOldWriteRunsMacOSMarkIsTheWritingFigure(t *testing.T) {
	rep := reporttest.MacOSWriteOld(t)
	if e := rep.MacOS; e == nil {
		t.Fatal("the old write run read back without its mark")
	} else if e.SeriesSpeedup != 9.2 || !e.Writes() {
		t.Errorf("the old write run's mark read back as %+v, want the series' writing figure, 9.2x", e)
	}
	var txt, md strings.Builder
	Summary(&txt, rep)
	if err := RunMarkdown(&md, "macos-write-old", rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"runs show": txt.String(), "markdown": md.String()} {
		if !strings.Contains(out, "9.2x for qemu-img writing") || strings.Contains(out, "12.6x") {
			t.Errorf("%s of the old write run does not give the writing figure (9.2x), or still gives 12.6x:\n%s", name, out)
		}
	}
	var b strings.Builder
	if err := model.WriteRunCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := len(recs[0]) - 1 // macos_series_speedup
	marked := 0
	for _, r := range recs[1:] {
		if r[col] != "" {
			marked++
			if r[col] != "9.2" {
				t.Fatalf("the CSV's %s is %q on a write side's row, want 9.2", recs[0][col], r[col])
			}
		}
	}
	if marked == 0 {
		t.Errorf("no CSV row carries the mark")
	}
}

// A saved write sweep with a macos row, in the old shape, reads back
// with the writing figure too.
func TestOldWriteSweepsMacOSMarkIsTheWritingFigure(t *testing.T) {
	sw := reporttest.Sweep()
	sw.Config.Sides[0].Workload = model.WorkWrite
	sw.Spec.Sizes = []model.Buf{{}, {Kind: model.BufMacOS}}
	sw.MacOS = model.MacOSEmulationSwept(platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}, sw.Spec, model.WorkRead)
	sw.MacOS.SeriesCase = "" // as saved before: the reading figure, no case
	b, err := json.Marshal(sw)
	if err != nil {
		t.Fatal(err)
	}
	var back model.SweepReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if e := back.MacOS; e == nil || e.SeriesSpeedup != 9.2 || !e.Writes() {
		t.Errorf("the old write sweep's mark read back as %+v, want 9.2x, writing", e)
	}
}
