package main

import (
	"strings"
	"testing"
)

// TestRunsListShowsPartial: a saved partial run reads "partial: CAUSE" in
// 'runs list' and its reason in 'runs show'; a complete one "complete".
func TestRunsListShowsPartial(t *testing.T) {
	storeCmdHome(t)
	cut := storeCmdReport(1, 10)
	cut.Partial, cut.PartialReason = true, "interrupted after 2.0s of 5s"
	if err := testApp().saveRun("cut", cut, false); err != nil {
		t.Fatal(err)
	}
	if err := testApp().saveRun("whole", storeCmdReport(1, 10), false); err != nil {
		t.Fatal(err)
	}
	code, out, errs := storeCmdRun(t, "", "runs", "list")
	if code != 0 {
		t.Fatalf("runs list: exit %d: %s", code, errs)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	if !strings.Contains(rows["NAME"], "STATUS") || !strings.HasSuffix(rows["cut"], "partial: interrupted after 2.0s of 5s") ||
		!strings.HasSuffix(rows["whole"], "complete") {
		t.Errorf("runs list:\n%s", out)
	}
	code, out, _ = storeCmdRun(t, "", "runs", "show", "cut")
	if code != 0 || !strings.Contains(out, "**partial run**: interrupted after 2.0s of 5s") {
		t.Errorf("runs show (exit %d):\n%s", code, out)
	}
}
