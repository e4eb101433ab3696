package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunsListStoreErrors: a runs directory that is a file, and a run
// file that is not JSON, each say so once, naming the path, and exit 1
// (nothing could be read): the directory's error read "runs: runs: open
// …" before.
func TestRunsListStoreErrors(t *testing.T) {
	home := storeCmdHome(t)
	runs := filepath.Join(home, "runs")
	if err := os.WriteFile(runs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runApp(t, "runs", "list")
	if code != exitFailure || !strings.Contains(errs, "saved runs: open "+runs+": not a directory") || strings.Contains(errs, "runs: runs:") {
		t.Errorf("runs a file: exit %d, stderr %q", code, errs)
	}
	if err := os.Remove(runs); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs, "a.json"), []byte("{bad"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runApp(t, "runs", "list")
	if code != exitFailure || !strings.Contains(errs, "nbdscope: "+filepath.Join(runs, "a.json")+": line 1") {
		t.Errorf("a broken run file: exit %d, stderr %q", code, errs)
	}
}
