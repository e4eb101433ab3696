package model

import (
	"encoding/csv"
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

// On write sides g puts the clients' send buffers at macOS's (the bulk
// sender's): the run is marked as much as a read side's, from its start
// there or from a change to it; it was not (only the server's buffer
// counted). While the explorer runs the mark is in force exactly while a
// side is at macOS's buffer.
func TestMacOSEmulationOfClientBuffers(t *testing.T) {
	facts := platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}
	w := Report{Platform: facts, Config: DefaultConfig()}
	w.Config.Sides[1].ClientSndBuf = Buf{Kind: BufMacOS}
	if e := MacOSEmulationOf(w); e == nil || len(e.Sides) != 1 || e.Sides[0] != "B" {
		t.Errorf("B's client at macos: %+v, want B marked", e)
	}
	ch := Report{Platform: facts, Config: DefaultConfig(),
		Events: []Event{{T: 2, Side: "A", Setting: SetClientSndBuf, From: "default", To: "macos"}}}
	if e := MacOSEmulationOf(ch); e == nil || e.Sides[0] != "A" {
		t.Errorf("A's client changed to macos at 2 s: %+v, want A marked", e)
	}

	c := DefaultConfig()
	if e := MacOSEmulationNow(facts, c); e != nil {
		t.Errorf("the default pair: %+v, want no mark", e)
	}
	c.Sides[0].SndBuf = Buf{Kind: BufMacOS}
	e := MacOSEmulationNow(facts, c)
	if e == nil || len(e.Sides) != 1 || e.Sides[0] != "A" || e.SeriesSpeedup != 12.6 || e.Kernel != "Linux 6.18.0" {
		t.Fatalf("A at macos now: %+v", e)
	}
	if e := MacOSEmulationNow(platform.Facts{OS: "darwin"}, c); e != nil {
		t.Errorf("on a Mac: %+v, want no mark", e)
	}
	c.Sides[0].SndBuf = Buf{Kind: BufSize, Bytes: 2 << 20}
	if e := MacOSEmulationNow(facts, c); e != nil {
		t.Errorf("A back at 2m: %+v, want no mark", e)
	}
}

// A run's CSV carries the mark on each row whose side was at macOS's
// buffer: the kernel it ran on instead of XNU and the series' 12.6x; a
// row of a side at 2m has the cells empty. The CSV had no word of it.
func TestMacOSEmulationInRunCSV(t *testing.T) {
	rep := Report{Platform: platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}, Config: DefaultConfig()}
	rep.Config.Sides[0].SndBuf = Buf{Kind: BufMacOS}
	for _, side := range []SideID{"A", "B"} {
		s := Sample{T: 1, Side: side, Active: true}
		s.SndBuf.ServerRequested = "2m"
		if side == "A" {
			s.SndBuf.ServerRequested = "macos"
		}
		rep.Samples = append(rep.Samples, s)
	}
	var b strings.Builder
	if err := WriteRunCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("%v: %q", err, b.String())
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	kc, xc := col["macos_emulation"], col["macos_series_speedup"]
	if kc == 0 || xc == 0 {
		t.Fatalf("no macos_emulation, macos_series_speedup columns: %q", recs[0])
	}
	if a := recs[1]; a[kc] != "Linux 6.18.0" || a[xc] != "12.6" {
		t.Errorf("A at macos: %q, %q", a[kc], a[xc])
	}
	if b := recs[2]; b[kc] != "" || b[xc] != "" {
		t.Errorf("B at 2m: %q, %q, want empty", b[kc], b[xc])
	}
}

// A mark of write sides (macos-write: the clients' send buffers at macOS's)
// gives the series' qemu-img writing figure from a real Mac, 9.2x, not
// the reading one's 12.6x it gave; reads and mixed marks keep 12.6x.
func TestMacOSEmulationWritesSeriesFigure(t *testing.T) {
	facts := platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}
	c := DefaultConfig()
	for i := range c.Sides {
		c.Sides[i].Workload = WorkWrite
	}
	c.Sides[0].ClientSndBuf = Buf{Kind: BufMacOS}
	e := MacOSEmulationNow(facts, c)
	if e == nil || e.SeriesSpeedup != 9.2 || !e.Writes() {
		t.Errorf("A writing at macos: %+v, want the series' 9.2x for writes", e)
	}
	if e := MacOSEmulationOf(Report{Platform: facts, Config: c}); e == nil || e.SeriesSpeedup != 9.2 {
		t.Errorf("a run of A writing at macos: %+v, want 9.2x", e)
	}
	c.Sides[1].Workload, c.Sides[1].SndBuf = WorkRead, Buf{Kind: BufMacOS}
	if e := MacOSEmulationNow(facts, c); e == nil || e.SeriesSpeedup != 12.6 || e.Writes() {
		t.Errorf("A writing and B reading at macos: %+v, want the reading figure", e)
	}
}
