package presets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// b_over_a is derived from the samples when a run is read (model's
	// TestSidesDifferencesAreTheTables checks it); the rest reads back as
	// saved.
	rf.Report.BOverA = nil
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
	errs := concurrently(20, func(i int) error {
		r := testReport()
		r.Preset = fmt.Sprint(i)
		return s.SaveRun("run", r, false)
	})
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

func TestExportJSON(t *testing.T) {
	s := testStore(t)
	s.SaveRun("j", testReport(), false)
	rf, _ := s.Run("j")
	var b bytes.Buffer
	data, err := rf.JSON()
	if err != nil {
		t.Fatal(err)
	}
	b.Write(data)
	stored, _ := os.ReadFile(rf.File)
	if !bytes.Equal(b.Bytes(), stored) {
		t.Error("json export differs from the stored run")
	}
	back, err := parseRun(b.Bytes())
	if err != nil || !deepEqualNaN(back.Report, rf.Report) {
		t.Errorf("json export does not read back: %v", err)
	}
}
