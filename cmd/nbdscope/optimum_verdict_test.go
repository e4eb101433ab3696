package main

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/phrase"
)

// TestOptimumOneVerdict: a sweep saved by an older nbdscope (version 2),
// whose runs list named "optimum 512k (1.12x)" while its own table and
// runs show said "none clear", is judged again from its repeats when read,
// and every output names the same verdict: runs list, runs show (the
// sweep's table and optimum line), the SVG and the JSON.
func TestOptimumOneVerdict(t *testing.T) {
	home := storeCmdHome(t)
	if err := os.MkdirAll(filepath.Join(home, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "runs", "noisy.json"), reporttest.NoisySweepJSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	list := runsList(t)
	run := func(args ...string) string {
		code, out, errs := storeCmdRun(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	show := run("runs", "show", "noisy")
	svg := run("runs", "export", "noisy", "--format", "svg")
	js := run("runs", "export", "noisy", "--format", "json")
	var rf struct {
		Report model.Report `json:"report"`
	}
	if err := json.Unmarshal([]byte(js), &rf); err != nil || rf.Report.Sweep == nil || rf.Report.Sweep.Optimum == nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	o := rf.Report.Sweep.Optimum
	if o.Verdict.Kind != model.OptimumNoneClear || o.Named() != "" || o.Verdict.Repeats == 0 {
		t.Fatalf("the saved sweep's verdict: %+v", o.Verdict)
	}
	if !strings.Contains(js, `"kind": "none_clear"`) {
		t.Errorf("the JSON lacks the verdict's kind:\n%s", js)
	}
	// Every output says none clear, lists the same tied sizes, and names
	// no optimum.
	said := phrase.OptimumSaid(o)
	for name, out := range map[string]string{"runs list": list, "runs show": show, "svg": svg} {
		if !strings.Contains(out, "none clear") {
			t.Errorf("%s does not say none clear:\n%s", name, out)
		}
		if m := regexp.MustCompile(`optimum [0-9]+[km]|optimal: [0-9]+[km]|>optimum<`).FindString(out); m != "" {
			t.Errorf("%s names an optimum (%q) the verdict does not:\n%s", name, m, out)
		}
	}
	svgText := html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(svg, "")) // its lines are wrapped
	for name, out := range map[string]string{"runs show": show, "svg": svgText} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), said) {
			t.Errorf("%s lacks the verdict's words %q:\n%s", name, said, out)
		}
	}
	if !strings.Contains(list, phrase.OptimumShort(o)) {
		t.Errorf("runs list lacks %q:\n%s", phrase.OptimumShort(o), list)
	}
}
