package model

import (
	"encoding/json"
	"strings"
	"testing"

	"nbdscope/platform"
)

// A run that put a side at macOS's 8 KiB buffer on another kernel says
// so, with the series' figure from a real Mac; on a Mac it does not; a
// change to macos counts as much as a start there; a run saved before
// the mark was kept gains it when read.
func TestMacOSEmulation(t *testing.T) {
	linux := Report{Platform: platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}, Config: DefaultConfig()}
	linux.Config.Sides[0].SndBuf = Buf{Kind: BufMacOS}
	e := MacOSEmulationOf(linux)
	if e == nil || len(e.Sides) != 1 || e.Sides[0] != "A" || e.SeriesSpeedup != 12.6 {
		t.Fatalf("macos-gap on linux: %+v", e)
	}
	if e.Kernel != "Linux 6.18.0" || !strings.Contains(e.SeriesSource, "[PATCH v3 1/2]") {
		t.Errorf("kernel %q, source %q", e.Kernel, e.SeriesSource)
	}
	mac := linux
	mac.Platform.OS = "darwin"
	if e := MacOSEmulationOf(mac); e != nil {
		t.Errorf("on a Mac: %+v", e)
	}
	plain := Report{Platform: linux.Platform, Config: DefaultConfig()}
	if e := MacOSEmulationOf(plain); e != nil {
		t.Errorf("the default pair: %+v", e)
	}
	plain.Events = []Event{{T: 3, Side: "B", Setting: SetSndBuf, From: "2m", To: "macos"}}
	if e := MacOSEmulationOf(plain); e == nil || e.Sides[0] != "B" {
		t.Errorf("B changed to macos at 3 s: %+v", e)
	}
	b, err := json.Marshal(linux) // saved before the mark: MacOS nil
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.MacOS == nil {
		t.Errorf("an old saved run read back without the mark: %v %+v", err, back.MacOS)
	}
}
