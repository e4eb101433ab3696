package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"nbdscope/presets"
)

// run's segments and runs show's are one table (segtable): for a run in
// which A changed only its client receive buffer, transport and placement,
// both name those columns, and both print the same cells per row.
func TestRunAndRunsShowPrintOneSegmentsTable(t *testing.T) {
	data, err := os.ReadFile("../../presets/testdata/changes.json")
	if err != nil {
		t.Fatal(err)
	}
	var rf presets.RunFile
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	var text, md bytes.Buffer
	printSegments(&text, rf.Report)
	if err := presets.ExportRun(rf, presets.FormatMarkdown, &md); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	var head string
	for _, l := range lines {
		if strings.HasPrefix(l, "side ") {
			head = l
		}
	}
	for _, want := range []string{"client-rcvbuf", "transport", "placement", "from–to (s)", "throughput"} {
		if !strings.Contains(head, want) {
			t.Errorf("run's segments head %q lacks %q", head, want)
		}
	}
	// The row of A's tcp stretch, split into its words, in both.
	var textRow string
	for _, l := range lines {
		if strings.HasPrefix(l, "A ") && strings.Contains(l, "4.04–5.52") {
			textRow = strings.Join(strings.Fields(l), " ")
		}
	}
	var mdRow string
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.Contains(l, "| 4.04–5.52 ") {
			mdRow = strings.Join(strings.Fields(strings.ReplaceAll(l, "|", " ")), " ")
		}
	}
	if textRow == "" || textRow != mdRow {
		t.Errorf("A's tcp stretch:\nrun:        %q\nruns show:  %q", textRow, mdRow)
	}
	if !strings.Contains(textRow, "256k 1 split tcp") {
		t.Errorf("A's tcp stretch %q does not say what it ran with", textRow)
	}
}
