package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// An exec sweep's hyperfine file gave every size the same command
// ("nbdcopy {uri} null:" for default and for 2m), and hyperfine's
// scripts label each result by its command (plot_whisker.py's and
// plot_histogram.py's legends, welch_ttest.py's names): two boxes of
// one name. hyperfine's -L puts the parameter into each command; the
// buffer is not in the client's command line, so each names its size
// after it, as our load's description does.
func TestHyperfineExecCommandsNameTheirSize(t *testing.T) {
	rep := reporttest.Sweep()
	rep.Spec.Exec = &model.ExecSpec{Command: "nbdcopy {uri} null:"}
	var b bytes.Buffer
	if err := writeSweepHyperfine(&b, rep); err != nil {
		t.Fatal(err)
	}
	var f hyperfineFile
	if err := json.Unmarshal(b.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range f.Results {
		want := "nbdcopy {uri} null: (sndbuf=" + rep.Rows[i].Buffer + ")"
		if r.Command != want {
			t.Errorf("result %d: command %q, want %q", i, r.Command, want)
		}
		if seen[r.Command] {
			t.Errorf("result %d: command %q again", i, r.Command)
		}
		seen[r.Command] = true
	}
	if len(f.Results) < 2 || !strings.Contains(b.String(), `"sndbuf_effective_bytes"`) {
		t.Fatalf("%d results; %s", len(f.Results), b.String())
	}
}
