package presets

import (
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// TestPartialRunRoundTrip: a partial run keeps its mark and reason through
// a save and a load, and its list entry says so with the first cause (every
// export carries it: report's TestPartialRunExports). A complete run is
// listed as such.
func TestPartialRunRoundTrip(t *testing.T) {
	s := testStore(t)
	want := reporttest.Partial()
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
