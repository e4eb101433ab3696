package report

import (
	"encoding/csv"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/platform"
)

// A sweep with a macos row off a Mac says, in its text and markdown, that
// the row is this kernel with an 8 KiB buffer and what a real Mac gave the
// series; its CSV carries it on that row, as a run's does. A sweep said
// nothing of it.
func TestSweepMacOSMark(t *testing.T) {
	rep := reporttest.Sweep()
	rep.Rows[1].Buffer = "macos"
	rep.Spec.Sizes = []model.Buf{{}, {Kind: model.BufMacOS}}
	rep.MacOS = model.MacOSEmulationSwept(platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}, rep.Spec, model.WorkRead)
	if rep.MacOS == nil {
		t.Fatal("a sweep with a macos size on linux is not marked")
	}
	var txt, md strings.Builder
	SweepText(&txt, rep, 100)
	SweepMarkdown(&md, rep)
	for name, out := range map[string]string{"text": txt.String(), "markdown": md.String()} {
		for _, want := range []string{"the sweep's macos row", "Linux 6.18.0 kernel, not on XNU", "12.6x"} {
			if !strings.Contains(out, want) {
				t.Errorf("the sweep's %s lacks %q:\n%s", name, want, out)
			}
		}
	}
	var b strings.Builder
	if err := SweepCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	kc, ok := col["macos_emulation"]
	if !ok {
		t.Fatalf("no macos_emulation column: %q", recs[0])
	}
	for _, r := range recs[1:] {
		want := ""
		if r[0] == "macos" {
			want = "Linux 6.18.0"
		}
		if r[kc] != want || (want != "") != (r[col["macos_series_speedup"]] == "12.6") {
			t.Errorf("row %s: %q %q", r[0], r[kc], r[col["macos_series_speedup"]])
		}
	}
	if e := model.MacOSEmulationSwept(platform.Facts{OS: "darwin"}, rep.Spec, model.WorkRead); e != nil {
		t.Errorf("on a Mac: %+v", e)
	}
	if e := model.MacOSEmulationSwept(platform.Facts{OS: "linux"}, model.SweepSpec{Sizes: []model.Buf{{}}}, model.WorkRead); e != nil {
		t.Errorf("no macos size: %+v", e)
	}
}
