package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/ui"
)

// reportCtrl is a controller that has a run to report, for the explorer's
// s key; nothing else of it is called here.
type reportCtrl struct{ engine.Controller }

func (reportCtrl) Report() model.Report { return model.Report{} }

// The explorer's s saves the run too, and is told where: the path it
// names (help, message) is the file the save writes (issue 21, item 10).
func TestExplorerSaveNamesRunFile(t *testing.T) {
	home := storeCmdHome(t)
	a := testApp()
	var o ui.Options
	a.tuiPresets(&o)
	a.saveRunsToo(&o, reportCtrl{})
	if o.RunPath == nil {
		t.Fatal("the explorer is not told where s writes the run")
	}
	want := filepath.Join(home, "runs", "mine.json")
	if got := o.RunPath("mine"); got != want {
		t.Fatalf("RunPath(mine) = %q, want %q", got, want)
	}
	if err := o.SavePreset("mine", model.DefaultConfig(), "macos-gap"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("s did not write the run file it names: %v", err)
	}
	// The run names the preset the explorer's header named, where it
	// named none ("-" in runs list) before.
	code, out, _ := runApp(t, "runs", "list")
	if code != 0 || !strings.Contains(out, "mine") || !strings.Contains(out, "macos-gap") {
		t.Errorf("runs list: exit %d\n%s\nwant mine from macos-gap", code, out)
	}
}
