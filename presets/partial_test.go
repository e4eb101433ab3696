package presets

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"nbdscope/model"
)

// partialReport is testReport with side A's load dead halfway.
func partialReport() model.Report {
	r := testReport()
	c := model.Crash{T: 2.5, Side: "A", Role: model.RoleLoad, Target: "nbd+unix:///?socket=/tmp/q.sock",
		Status: "exit status 1", Reason: "target nbd+unix:///?socket=/tmp/q.sock: connection lost: nbd: sending WRITE: write: broken pipe",
		Stderr: []string{"nbdscope: target nbd+unix:///?socket=/tmp/q.sock: connection lost: nbd: sending WRITE: write: broken pipe"}}
	r.Crashes = []model.Crash{c}
	r.Partial, r.PartialReason = true, c.Text()+"; interrupted after 3.0s of 10s"
	return r
}

// TestPartialRunRoundTrip: a partial run keeps its mark and reason through
// a save and a load, its list entry says so with the first cause, and
// every export carries it. A complete run is listed as such.
func TestPartialRunRoundTrip(t *testing.T) {
	s := testStore(t)
	want := partialReport()
	if err := s.SaveRun("cut", want, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun("whole", testReport(), false); err != nil {
		t.Fatal(err)
	}
	rf, err := s.Run("cut")
	if err != nil {
		t.Fatal(err)
	}
	got := rf.Report
	if !got.Partial || got.PartialReason != want.PartialReason || !deepEqualNaN(got.Crashes, want.Crashes) {
		t.Fatalf("loaded back: partial=%v reason %q crashes %+v", got.Partial, got.PartialReason, got.Crashes)
	}

	runs, errs := s.Runs()
	if len(errs) > 0 || len(runs) != 2 {
		t.Fatalf("runs %+v, errors %v", runs, errs)
	}
	for _, ri := range runs {
		switch ri.Name {
		case "cut":
			if !ri.Partial || ri.Cause != "side A load died" {
				t.Errorf("list entry of the partial run: partial=%v cause %q", ri.Partial, ri.Cause)
			}
		case "whole":
			if ri.Partial || ri.Cause != "" {
				t.Errorf("list entry of the complete run: partial=%v cause %q", ri.Partial, ri.Cause)
			}
		}
	}

	var md bytes.Buffer
	if err := ExportRun(rf, FormatMarkdown, &md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"**partial run**: side A load died (exit status 1): target nbd+unix:///?socket=/tmp/q.sock: connection lost",
		"## Crashes", "2.50s side A load died (exit status 1)"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md.String())
		}
	}

	var cb bytes.Buffer
	if err := ExportRun(rf, FormatCSV, &cb); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv: %v %q", err, recs)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, rec := range recs[1:] {
		if rec[col["partial"]] != "true" || rec[col["partial_reason"]] != want.PartialReason {
			t.Fatalf("csv row %q: partial columns", rec)
		}
	}

	var cmp bytes.Buffer
	whole, _ := s.Run("whole")
	if err := Compare(whole, rf, &cmp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmp.String(), "partial: side A load died") {
		t.Errorf("compare does not say b is partial:\n%s", cmp.String())
	}
}

func TestPartialCause(t *testing.T) {
	for _, c := range []struct {
		partial bool
		reason  string
		want    string
	}{
		{false, "", ""},
		{true, "interrupted after 2.0s of 8s", "interrupted after 2.0s of 8s"},
		{true, "side B server died (signal: killed): nbd+unix:///?socket=/x: (no output); interrupted after 2.0s of 8s", "side B server died"},
		{true, "", "partial"},
	} {
		r := model.Report{Partial: c.partial, PartialReason: c.reason}
		if got := r.PartialCause(); got != c.want {
			t.Errorf("PartialCause(%q) = %q, want %q", c.reason, got, c.want)
		}
	}
}
