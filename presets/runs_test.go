package presets

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"nbdscope/model"
)

func TestRunRoundTrip(t *testing.T) {
	s := testStore(t)
	r := testReport()
	if err := s.SaveRun("first", r, false); err != nil {
		t.Fatal(err)
	}
	rf, err := s.Run("first")
	if err != nil {
		t.Fatal(err)
	}
	if rf.Name != "first" || rf.Version != FileVersion || rf.File != filepath.Join(s.RunDir, "first.json") {
		t.Errorf("run file %q v%d %q", rf.Name, rf.Version, rf.File)
	}
	if !deepEqualNaN(rf.Report, r) {
		a, _ := json.Marshal(rf.Report)
		b, _ := json.Marshal(r)
		t.Errorf("report changed:\n got %s\nwant %s", a, b)
	}
	if !deepEqualNaN(rf.Report.Samples, r.Samples) || !deepEqualNaN(rf.Report.Events, r.Events) {
		t.Error("samples or events changed")
	}
	// Unknown figures stay unknown, not 0.
	got := rf.Report.Samples[1]
	if got.ThroughputBps.Known() || got.LatencyP50Ms.Known() || got.Client.EAGAINPer2MiB.Known() || rf.Report.Sides[0].Summary.LatencyP99Ms.Known() {
		t.Error("an unknown figure came back known")
	}
	if last := rf.Report.Samples[len(rf.Report.Samples)-1]; last.Server != nil {
		t.Error("a missing server came back")
	}
	data, _ := os.ReadFile(rf.File)
	for _, want := range []string{"{\n  \"version\": 1,\n  \"name\": \"first\",\n  \"report\": {", `"throughput_bps": null`, `"server": null`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("run file lacks %q", want)
		}
	}
	if fi, _ := os.Stat(rf.File); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}

	// Save what was loaded: the same bytes.
	if err := s.SaveRun("second", rf.Report, false); err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(filepath.Join(s.RunDir, "second.json"))
	if !bytes.Equal(bytes.Replace(data, []byte(`"first"`), []byte(`"second"`), 1), data2) {
		t.Error("a saved run did not save back identically")
	}

	// A report without a version gets the current one.
	r.Version = 0
	if err := s.SaveRun("nover", r, false); err != nil {
		t.Fatal(err)
	}
	if rf, _ := s.Run("nover"); rf.Report.Version != model.ReportVersion {
		t.Errorf("report version %d", rf.Report.Version)
	}
}

func TestRunsListAndRemove(t *testing.T) {
	s := testStore(t)
	if runs, errs := s.Runs(); len(runs) != 0 || len(errs) != 0 {
		t.Fatalf("empty store: %v %v", runs, errs)
	}
	r := testReport()
	later := r
	later.Time = r.Time.Add(time.Hour)
	later.Preset = "custom"
	if err := s.SaveRun("a-later", later, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun("b-earlier", r, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun("b-earlier", r, false); !errors.Is(err, ErrExists) {
		t.Errorf("second save = %v", err)
	}
	if err := s.CheckRunName("b-earlier", false); !errors.Is(err, ErrExists) {
		t.Errorf("CheckRunName existing = %v", err)
	}
	if err := s.CheckRunName("b-earlier", true); err != nil {
		t.Errorf("CheckRunName existing, force = %v", err)
	}
	if err := s.CheckRunName("new", false); err != nil {
		t.Errorf("CheckRunName new = %v", err)
	}
	if err := s.SaveRun("b-earlier", later, true); err != nil {
		t.Errorf("forced save: %v", err)
	}
	s.SaveRun("b-earlier", r, true)
	os.WriteFile(filepath.Join(s.RunDir, "broken.json"), []byte(`{"version": 1, "report": {"samples": "no"}}`), 0o644)
	os.WriteFile(filepath.Join(s.RunDir, "future.json"), []byte(`{"version": 2, "report": {}}`), 0o644)
	os.WriteFile(filepath.Join(s.RunDir, "futurereport.json"), []byte(`{"version": 1, "report": {"version": 7}}`), 0o644)

	runs, errs := s.Runs()
	if len(runs) != 2 || runs[0].Name != "b-earlier" || runs[1].Name != "a-later" {
		t.Fatalf("runs %+v", runs)
	}
	if len(errs) != 3 {
		t.Errorf("errors %v", errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), s.RunDir) {
			t.Errorf("error names no file: %v", err)
		}
	}
	ri := runs[1]
	if ri.Preset != "custom" || !ri.Time.Equal(later.Time) || ri.Throughput("A") != 1.5e9 || ri.Throughput("B") != 3e9 || ri.Throughput("C").Known() {
		t.Errorf("info %+v", ri)
	}
	if err := s.RemoveRun("a-later"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run("a-later"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after rm: %v", err)
	}
	if err := s.RemoveRun("a-later"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second rm: %v", err)
	}
	noTempFiles(t, s.RunDir)
}

func TestConcurrentRunSaves(t *testing.T) {
	s := testStore(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := testReport()
			r.Preset = fmt.Sprint(i)
			errs[i] = s.SaveRun("run", r, false)
		}(i)
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, ErrExists) {
			t.Error(err)
		}
	}
	if won != 1 {
		t.Errorf("%d writers won", won)
	}
	if _, err := s.Run("run"); err != nil {
		t.Error(err)
	}
}

// cells splits a markdown table row into trimmed cells.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var out []string
	for _, c := range strings.Split(row, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// tableRow finds the row of a markdown table whose first cell is first,
// after the header that starts with header.
func tableRow(t *testing.T, md, header, first string) []string {
	t.Helper()
	in := false
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			in = false
			continue
		}
		c := cells(l)
		if c[0] == header {
			in = true
			continue
		}
		if in && c[0] == first {
			return c
		}
	}
	t.Fatalf("no row %q in the table %q:\n%s", first, header, md)
	return nil
}

func TestExportMarkdown(t *testing.T) {
	rf := RunFile{Name: "demo", Report: testReport()}
	rf.Report.Sides[0].Summary.SetFill(model.Fill{Samples: 100, FullPct: 61, EmptyPct: 37, Bytes: 5000, Limit: 8192})
	var b bytes.Buffer
	if err := ExportRun(rf, "md", &b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	t.Log("\n" + md)
	hdr := regexp.MustCompile(`(?m)^\| side +\| buffer size +\| +time \| +user \| +system \| +GiB/s \| syscalls per 2 MiB \| sndbuf full/empty % \|$`)
	if !hdr.MatchString(md) {
		t.Error("no summary header")
	}
	// time = seconds; user/system = client + server; GiB/s; receiver (client) calls.
	want := map[string][]string{
		"A": {"A", "default (eff. 208k)", "10.00", "0.75", "4.75", "1.40", "10.00", "61/37"},
		"B": {"B", "2m (eff. 4m)", "10.00", "0.38", "2.00", "2.79", "1.25", "n/a"},
	}
	for side, w := range want {
		if got := tableRow(t, md, "side", side); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("row %s: %q, want %q", side, got, w)
		}
	}
	for _, s := range []string{
		"# nbdscope run demo", "- preset: linux-gap", "- platform: linux/amd64, Linux 6.8.0, Test CPU @ 3.00GHz, 2 cores",
		"default 208k, max 416k", "net.core.wmem_max=212992", "## Events", "## Warnings", "sudo sysctl -w net.core.wmem_max=2097152",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	if ev := tableRow(t, md, "t (s)", "5.25"); strings.Join(ev, "|") != "5.25|A|connections|1|4" {
		t.Errorf("event row %q", ev)
	}

	// Writes: the buffer is the client's, the receiver the server;
	// unknown and external figures.
	r := testReport()
	r.Config.Sides[0].Workload = model.WorkWrite
	r.Sides[0].Summary.SndBuf.ClientRequested = "2m"
	r.Sides[0].Summary.SndBuf.ClientEffective = 4 << 20
	r.Sides[0].Summary.Server.RecvCallsPer2MiB = 3
	r.Sides[1].Summary.Server = nil
	r.Sides[1].Summary.ThroughputBps = model.Unknown
	r.Sides[1].Summary.Client.SysS = model.Unknown
	r.Sides[1].Summary.Seconds = 0
	b.Reset()
	if err := ExportRun(RunFile{Name: "w", Report: r}, "markdown", &b); err != nil {
		t.Fatal(err)
	}
	md = b.String()
	if got := tableRow(t, md, "side", "A"); got[1] != "2m (eff. 4m)" || got[6] != "3.00" {
		t.Errorf("write row %q", got)
	}
	if got := tableRow(t, md, "side", "B"); strings.Join(got, "|") != "B|2m (eff. 4m)|n/a|0.25*|n/a*|n/a|1.25|n/a" {
		t.Errorf("external row %q", got)
	}
	if !strings.Contains(md, "client only") {
		t.Error("no note on client-only figures")
	}
}

func TestExportCSV(t *testing.T) {
	rf := RunFile{Name: "demo", Report: testReport()}
	var b bytes.Buffer
	if err := ExportRun(rf, "csv", &b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(rf.Report.Samples) {
		t.Fatalf("%d records for %d samples", len(recs), len(rf.Report.Samples))
	}
	if strings.Join(recs[0], ",") != strings.Join(CSVHeader, ",") {
		t.Errorf("header %q", recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	a := recs[1]
	for k, v := range map[string]string{
		"t": "0", "side": "A", "active": "true", "bytes": "268435456", "throughput_bps": "1500000000",
		"client_recv_calls_per_2mib": "10", "server_recv_calls_per_2mib": "0.5",
		"client_user_s": "0.125", "client_sys_s": "0.75", "server_user_s": "0.25", "server_sys_s": "1.5",
		"server_sndbuf_effective": "212992", "client_sndbuf_effective": "", "latency_p50_ms": "1.5", "latency_p99_ms": "",
	} {
		if a[col[k]] != v {
			t.Errorf("A sample %s = %q, want %q", k, a[col[k]], v)
		}
	}
	if bs := recs[2]; bs[col["throughput_bps"]] != "" || bs[col["side"]] != "B" || bs[col["active"]] != "true" {
		t.Errorf("B sample %q", bs)
	}
	if ext := recs[len(recs)-1]; ext[col["server_recv_calls_per_2mib"]] != "" || ext[col["server_user_s"]] != "" || ext[col["throughput_bps"]] != "500000000" {
		t.Errorf("external sample %q", ext)
	}
}

func TestExportJSON(t *testing.T) {
	s := testStore(t)
	s.SaveRun("j", testReport(), false)
	rf, _ := s.Run("j")
	var b bytes.Buffer
	if err := ExportRun(rf, "json", &b); err != nil {
		t.Fatal(err)
	}
	stored, _ := os.ReadFile(rf.File)
	if !bytes.Equal(b.Bytes(), stored) {
		t.Error("json export differs from the stored run")
	}
	back, err := parseRun(b.Bytes())
	if err != nil || !deepEqualNaN(back.Report, rf.Report) {
		t.Errorf("json export does not read back: %v", err)
	}
	if err := ExportRun(rf, "xml", &b); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestCompare(t *testing.T) {
	a := RunFile{Name: "base", Report: testReport()}
	b := RunFile{Name: "tuned", Report: testReport()}
	// b's A: 4.5e9 B/s (a: 1.5e9), 2.5 calls (a: 10), CPU 0.25+0.05 s/GiB (a: 0.375+0.2).
	sa := &b.Report.Sides[0].Summary
	sa.ThroughputBps = 4.5e9
	sa.Client.RecvCallsPer2MiB = 2.5
	sa.Client.CPUSPerGiB = 0.25
	srv := *sa.Server
	srv.CPUSPerGiB = 0.05
	sa.Server = &srv
	// b's B is unknown; b has a side C that a lacks.
	b.Report.Sides[1].Summary.ThroughputBps = model.Unknown
	b.Report.Sides = append(b.Report.Sides, model.SideReport{Name: "C", Summary: b.Report.Sides[0].Summary})

	var out bytes.Buffer
	if err := Compare(a, b, &out); err != nil {
		t.Fatal(err)
	}
	txt := out.String()
	t.Log("\n" + txt)
	rows := map[string][]string{}
	for _, l := range strings.Split(txt, "\n") {
		if strings.HasPrefix(l, "|") {
			c := cells(l)
			rows[c[0]+"/"+c[1]] = c
		}
	}
	for key, want := range map[string]string{
		"A/GiB/s":              "1.40|4.19|3.00x",
		"A/syscalls per 2 MiB": "10.00|2.50|0.25x",
		"A/CPU s/GiB":          "0.57|0.30|0.52x",
		"B/GiB/s":              "2.79|n/a|n/a",
		"B/syscalls per 2 MiB": "1.25|1.25|1.00x",
		"C/GiB/s":              "n/a|4.19|n/a",
	} {
		c := rows[key]
		if c == nil {
			t.Errorf("no row %s", key)
			continue
		}
		if got := strings.Join(c[2:], "|"); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
	if !strings.Contains(txt, "a: base (2025-03-04 05:06:07, preset linux-gap)") || !strings.Contains(txt, "b: tuned") {
		t.Error("no run names")
	}
	// Ratio itself.
	if r := Ratio(4, 1); r != 0.25 {
		t.Errorf("Ratio(4, 1) = %v", r)
	}
	if Ratio(0, 1).Known() || Ratio(model.Unknown, 1).Known() || Ratio(1, model.Figure(math.Inf(1))).Known() {
		t.Error("Ratio of unknowns is known")
	}
}
