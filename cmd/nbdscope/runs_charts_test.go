package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// runs compare prints the ratio table, then both runs' series charted on
// one time axis, 80 columns wide when stdout is not a terminal; runs
// export --format svg writes the charts as an SVG document.
func TestRunsCompareAndExportCharts(t *testing.T) {
	storeCmdHome(t)
	saveTestRun(t, "base", storeCmdReport(1, 10))
	saveTestRun(t, "tuned", storeCmdReport(2, 1))
	code, out, errs := storeCmdRun(t, "", "runs", "compare", "base", "tuned")
	if code != 0 {
		t.Fatalf("runs compare: exit %d: %s", code, errs)
	}
	table, charts, ok := strings.Cut(out, "── a: base   ━━ b: tuned")
	if !ok || !strings.Contains(table, "b/a") {
		t.Fatalf("want the table, then the charts' legend:\n%s", out)
	}
	for _, want := range []string{"side A · throughput (MiB/s)", "side A · receive calls per 2 MiB", "0s", "changes:"} {
		if !strings.Contains(charts, want) {
			t.Errorf("charts lack %q:\n%s", want, charts)
		}
	}
	for _, l := range strings.Split(charts, "\n") {
		if n := utf8.RuneCountInString(l); n > defaultWidth {
			t.Errorf("a %d-column line in a pipe: %q", n, l)
		}
	}

	file := filepath.Join(t.TempDir(), "tuned.svg")
	if code, _, errs := storeCmdRun(t, "", "runs", "export", "tuned", "--format", "svg", "-o", file); code != 0 {
		t.Fatalf("runs export --format svg: exit %d: %s", code, errs)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var doc struct {
		XMLName xml.Name
		Groups  []struct {
			Class string `xml:"class,attr"`
		} `xml:"g"`
	}
	if err := xml.NewDecoder(f).Decode(&doc); err != nil {
		t.Fatalf("the exported SVG is not XML: %v", err)
	}
	n := 0
	for _, g := range doc.Groups {
		if g.Class == "chart" {
			n++
		}
	}
	if doc.XMLName.Local != "svg" || n != 6 {
		t.Errorf("<%s> with %d charts, want <svg> with 6", doc.XMLName.Local, n)
	}
}
