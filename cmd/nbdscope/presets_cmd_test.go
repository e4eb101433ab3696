package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/presets"
	"nbdscope/ui"
)

// storeCmdRun runs the command line args with stdin as input and returns
// the exit status, stdout and stderr. It swaps the process's standard files,
// so tests using it must not run in parallel.
func storeCmdRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	open := func(name, content string) *os.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	in, out, errf := open("stdin", stdin), open("stdout", ""), open("stderr", "")
	oldIn, oldOut, oldErr := os.Stdin, os.Stdout, os.Stderr
	os.Stdin, os.Stdout, os.Stderr = in, out, errf
	code := run(args)
	os.Stdin, os.Stdout, os.Stderr = oldIn, oldOut, oldErr
	in.Close()
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(filepath.Join(dir, "stdout"))
	e, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	return code, string(o), string(e)
}

// storeCmdHome points NBDSCOPE_HOME at a fresh directory.
func storeCmdHome(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	t.Setenv("NBDSCOPE_HOME", h)
	return h
}

// realSidesHome skips a test that runs real NBD sides under -short, and
// makes its store home (storeCmdHome).
func realSidesHome(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real NBD sides")
	}
	return storeCmdHome(t)
}

// inProcessSides is realSidesHome for a test that runs the command in
// this process: the sides' children are this test binary.
func inProcessSides(t *testing.T) {
	t.Helper()
	realSidesHome(t)
	t.Setenv(asBinaryEnv, "1")
}

func TestPresetsCommands(t *testing.T) {
	home := storeCmdHome(t)
	expect := func(want int, stdin string, args ...string) (string, string) {
		t.Helper()
		code, out, errs := storeCmdRun(t, stdin, args...)
		if code != want {
			t.Fatalf("nbdscope %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errs)
		}
		return out, errs
	}

	out, _ := expect(0, "", "presets", "list")
	for _, p := range presets.Builtins() {
		if !strings.Contains(out, p.Name) || !strings.Contains(out, p.Description) {
			t.Errorf("list lacks %s", p.Name)
		}
	}
	if !strings.HasPrefix(out, "NAME") || strings.Count(out, "built-in") != len(presets.Builtins()) {
		t.Errorf("list:\n%s", out)
	}

	out, _ = expect(0, "", "presets", "show", "macos-gap")
	var f struct {
		Version int
		Name    string
		Config  model.Config
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil || f.Version != 1 || f.Name != "macos-gap" || f.Config.Sides[0].SndBuf.String() != "macos" {
		t.Errorf("show: %v %+v\n%s", err, f, out)
	}

	file := filepath.Join(t.TempDir(), "exported.json")
	expect(0, "", "presets", "export", "macos-gap", "-o", file)
	if data, _ := os.ReadFile(file); string(data) != out {
		t.Error("export -o differs from show")
	}
	out, _ = expect(0, "", "presets", "export", "macos-gap")
	if !strings.Contains(out, `"name": "macos-gap"`) {
		t.Error("export to stdout")
	}

	// Import: under the built-in's name refused; --name; refusal; --force; stdin.
	expect(2, "", "presets", "import", file) // a built-in's name: a bad value, nothing imported
	out, _ = expect(0, "", "presets", "import", file, "--name", "mine")
	if !strings.Contains(out, "mine") {
		t.Errorf("import says %q", out)
	}
	_, errs := expect(2, "", "presets", "import", "--name", "mine", file)
	if !strings.Contains(errs, "--force") {
		t.Errorf("refused import does not mention --force: %s", errs)
	}
	expect(0, "", "presets", "import", "--force", file, "--name", "mine")
	data, _ := os.ReadFile(file)
	expect(0, string(data), "presets", "import", "-", "--name", "fromstdin")
	noname := filepath.Join(t.TempDir(), "named-after-file.json")
	os.WriteFile(noname, []byte(`{"version": 1, "description": "no name inside"}`), 0o644)
	expect(0, "", "presets", "import", noname)
	expect(2, "", "presets", "import", filepath.Join(t.TempDir(), "missing.json"))
	notPreset := filepath.Join(t.TempDir(), "not-a-preset.json")
	os.WriteFile(notPreset, []byte(`{"version": 1, "name": "x", "config": {"mode": "sideways"}}`), 0o644)
	expect(2, "", "presets", "import", notPreset)

	out, _ = expect(0, "", "presets", "list")
	for _, n := range []string{"mine", "fromstdin", "named-after-file"} {
		if !strings.Contains(out, n) {
			t.Errorf("list lacks %s:\n%s", n, out)
		}
	}
	if strings.Count(out, "user") != 3 {
		t.Errorf("list:\n%s", out)
	}

	// Rename, with the flag after the names.
	expect(0, "", "presets", "rename", "mine", "mine2")
	expect(2, "", "presets", "rename", "mine2", "fromstdin") // taken: --force says so
	expect(0, "", "presets", "rename", "mine2", "fromstdin", "--force")
	expect(2, "", "presets", "rename", "linux-gap", "x") // built-ins are read-only
	expect(2, "", "presets", "show", "mine2")            // unknown names are bad values

	// Remove.
	expect(0, "", "presets", "rm", "fromstdin")
	expect(2, "", "presets", "rm", "fromstdin")
	expect(2, "", "presets", "rm", "linux-gap")

	// A broken file is reported, the rest still listed, exit 0.
	os.WriteFile(filepath.Join(home, "presets", "broken.json"), []byte(`{"version": 99}`), 0o644)
	out, errs = expect(0, "", "presets", "list")
	if !strings.Contains(errs, filepath.Join(home, "presets", "broken.json")) || !strings.Contains(errs, "version 99") {
		t.Errorf("broken file not reported: %s", errs)
	}
	if !strings.Contains(out, "named-after-file") || !strings.Contains(out, "linux-gap") {
		t.Errorf("list with a broken file:\n%s", out)
	}

	// Bad usage: exit 2.
	for _, args := range [][]string{
		{"presets"}, {"presets", "bogus"}, {"presets", "show"}, {"presets", "show", "a", "b"},
		{"presets", "rm", "../x"}, {"presets", "show", ".hidden"}, {"presets", "rename", "a"},
		{"presets", "list", "extra"}, {"presets", "import", "f", "--bogus"}, {"presets", "export", "a/b"},
	} {
		expect(2, "", args...)
	}
	out, _ = expect(0, "", "presets", "help")
	if !strings.Contains(out, filepath.Join(home, "presets")) {
		t.Errorf("help does not name the directory:\n%s", out)
	}
	expect(0, "", "presets", "rename", "--help")
}

// saveTestRun saves rep under name in the store of the test's home.
func saveTestRun(t *testing.T, name string, rep model.Report) {
	t.Helper()
	if err := testApp().saveRun(name, rep, false); err != nil {
		t.Fatal(err)
	}
}

// runsList is what 'runs list' prints, which must succeed.
func runsList(t *testing.T) string {
	t.Helper()
	code, out, errs := storeCmdRun(t, "", "runs", "list")
	if code != 0 {
		t.Fatalf("runs list: exit %d: %s", code, errs)
	}
	return out
}

// storeCmdReport is a small finished run.
func storeCmdReport(gibps float64, calls model.Figure) model.Report {
	cfg := model.DefaultConfig()
	cfg.Duration = model.Duration(5 * time.Second)
	srv := model.Process{RecvCallsPer2MiB: 0.5, UserS: 0.25, SysS: 1, CPUSPerGiB: 0.1}
	sum := func(tp float64) model.Summary {
		s := srv
		return model.Summary{Figures: model.Figures{Bytes: 1 << 30, Seconds: 5, ThroughputBps: model.Figure(tp * (1 << 30)),
			Client: model.Process{RecvCallsPer2MiB: calls, UserS: 0.5, SysS: 2, CPUSPerGiB: 0.25}, Server: &s,
			LatencyP50Ms: model.Unknown, LatencyP99Ms: model.Unknown}}
	}
	return model.Report{
		Version: model.ReportVersion, Nbdscope: model.Version, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Preset: "linux-gap", Config: cfg,
		Sides:   []model.SideReport{{Name: "A", Summary: sum(gibps)}, {Name: "B", Summary: sum(2 * gibps)}},
		Samples: []model.Sample{{T: 0.25, Side: "A", Active: true, Figures: model.Figures{ThroughputBps: 1e9, LatencyP50Ms: model.Unknown, LatencyP99Ms: model.Unknown}}},
		Events:  []model.Event{{T: 1, Side: "B", Setting: "sndbuf", From: "default", To: "2m"}},
	}
}

func TestRunsCommands(t *testing.T) {
	home := storeCmdHome(t)
	expect := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errs := storeCmdRun(t, "", args...)
		if code != want {
			t.Fatalf("nbdscope %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errs)
		}
		return out, errs
	}
	_, errs := expect(0, "runs", "list")
	if !strings.Contains(errs, "no saved runs") {
		t.Errorf("empty list: %q", errs)
	}

	// run --save goes through the wired hook.
	saveTestRun(t, "base", storeCmdReport(1, 10))
	if err := testApp().saveRun("base", storeCmdReport(1, 10), false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second save: %v", err)
	}
	saveTestRun(t, "tuned", storeCmdReport(2, 1))

	out, _ := expect(0, "runs", "list")
	for _, want := range []string{"NAME", "TIME", "PRESET", "base", "tuned", "linux-gap", "1.00 GiB/s", "2.00 GiB/s", "4.00 GiB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}

	out, _ = expect(0, "runs", "show", "base")
	if !strings.Contains(out, "| side | buffer size") || !strings.Contains(out, "## Events") {
		t.Errorf("show:\n%s", out)
	}
	// --rate-unit reaches the markdown's rate column (issue 25: every
	// displayed rate), and the next command is back to GiB/s.
	out, _ = expect(0, "runs", "show", "base", "--rate-unit", "gbit")
	if !strings.Contains(out, "| Gbit/s |") || strings.Contains(out, "| GiB/s |") {
		t.Errorf("show --rate-unit gbit:\n%s", out)
	}
	if out, _ = expect(0, "runs", "show", "base", "-f", "g"); !strings.Contains(out, "| Gbit/s |") {
		t.Errorf("show -f g (iperf3's letter for Gbit/s):\n%s", out)
	}
	expect(2, "runs", "show", "base", "--rate-unit", "bogus")
	if out, _ = expect(0, "runs", "show", "base"); !strings.Contains(out, "| GiB/s |") {
		t.Errorf("show after --rate-unit gbit:\n%s", out)
	}
	csvFile := filepath.Join(t.TempDir(), "base.csv")
	expect(0, "runs", "export", "base", "--format", "csv", "-o", csvFile)
	f, _ := os.Open(csvFile)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 2 || recs[0][0] != "t" {
		t.Errorf("csv export: %v %q", err, recs)
	}
	out, _ = expect(0, "runs", "export", "tuned", "--format", "json")
	var rf presets.RunFile
	if err := json.Unmarshal([]byte(out), &rf); err != nil || rf.Name != "tuned" || rf.Version != 1 {
		t.Errorf("json export: %v", err)
	}
	out, _ = expect(0, "runs", "export", "tuned")
	if !strings.Contains(out, "# nbdscope run tuned") {
		t.Errorf("default export is not markdown:\n%s", out)
	}

	out, _ = expect(0, "runs", "compare", "base", "tuned")
	if !strings.Contains(out, "b/a") || !strings.Contains(out, "2.00x") || !strings.Contains(out, "0.10x") {
		t.Errorf("compare:\n%s", out)
	}

	// A broken run is reported; the others still listed.
	os.WriteFile(filepath.Join(home, "runs", "broken.json"), []byte(`{"version": 1, "report": {"sides": 3}}`), 0o644)
	out, errs = expect(0, "runs", "list")
	if !strings.Contains(errs, "broken.json") || !strings.Contains(out, "tuned") {
		t.Errorf("broken run: %s\n%s", errs, out)
	}

	expect(0, "runs", "rm", "base")
	expect(2, "runs", "show", "base") // an unknown name: a bad value, nothing done
	expect(2, "runs", "rm", "base")
	expect(2, "runs", "compare", "base", "tuned")
	expect(2, "runs", "export", "base", "-o", filepath.Join(home, "never-written.md"))
	if _, err := os.Stat(filepath.Join(home, "never-written.md")); err == nil {
		t.Error("runs export of an unknown run wrote its -o file")
	}
	for _, args := range [][]string{
		{"runs"}, {"runs", "bogus"}, {"runs", "show"}, {"runs", "export", "tuned", "--format", "xml"},
		{"runs", "compare", "tuned"}, {"runs", "rm", "../x"}, {"runs", "list", "x"},
	} {
		expect(2, args...)
	}
	expect(0, "runs", "help")
	expect(0, "runs", "export", "-h")
}

func TestPresetHooks(t *testing.T) {
	storeCmdHome(t)
	cfg, err := testApp().presetConfig("macos-gap")
	if err != nil || cfg.Sides[0].SndBuf.String() != "macos" {
		t.Errorf("presetConfig(macos-gap) = %v, %v", cfg.Sides[0].SndBuf, err)
	}
	if cfg, err := testApp().presetConfig(""); err != nil || cfg.Sides[1].SndBuf.String() != "2m" {
		t.Errorf("presetConfig(\"\") = %v", err)
	}
	if _, err := testApp().presetConfig("nope"); err == nil || !strings.Contains(err.Error(), "presets list") {
		t.Errorf("presetConfig(nope) = %v", err)
	}
	if sp, err := testApp().sweepSpec("sweep"); err != nil || sp == nil || sp.Repeat != 3 || len(sp.Sizes) != 8 {
		t.Errorf("sweepSpecFor(sweep) = %+v, %v", sp, err)
	}
	if sp, err := testApp().sweepSpec("linux-gap"); err != nil || sp != nil {
		t.Errorf("sweepSpecFor(linux-gap) = %+v, %v", sp, err)
	}
	// A user preset reaches --preset.
	st, _ := presets.DefaultStore()
	p, _ := presets.Builtin("nbdcopy")
	p.Name, p.BuiltIn = "my-copy", false
	p.Config.Sides[1].Connections = 7
	if err := st.SavePreset(p, false); err != nil {
		t.Fatal(err)
	}
	if cfg, err := testApp().presetConfig("my-copy"); err != nil || cfg.Sides[1].Connections != 7 {
		t.Errorf("presetConfig(my-copy) = %v", err)
	}
}

// testApp is an app on discarded streams over the store NBDSCOPE_HOME names.
func testApp() *app { return newApp(strings.NewReader(""), io.Discard, io.Discard) }

// A preset that sweeps a real client is refused by run and the explorer
// (exit 2, with the two ways to use it): its configuration alone would run
// our load instead of the client, quietly.
func TestExecSweepPresetRefusedByRun(t *testing.T) {
	storeCmdHome(t)
	for _, c := range []struct {
		preset string
		args   []string
	}{
		{"qemu-img-read", []string{"run", "--preset", "qemu-img-read", "--duration", "1s"}},
		{"nbdcopy-blkhash", []string{"--preset", "nbdcopy-blkhash"}},
	} {
		code, _, errs := runApp(t, c.args...)
		if code != 2 || !strings.Contains(errs, "sweeps a real client") || !strings.Contains(errs, "'nbdscope sweep --preset "+c.preset+"'") {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, errs)
		}
	}
	// sweep takes them (CI caught a first version that refused them there).
	for _, name := range []string{"run", "sweep"} {
		cmd := &cobra.Command{Use: name}
		lf := addLoadFlags(testApp(), cmd, false)
		if err := cmd.ParseFlags([]string{"--preset", "qemu-img-read"}); err != nil {
			t.Fatal(err)
		}
		if _, err := lf.config(testApp()); (err == nil) != (name == "sweep") {
			t.Errorf("%s --preset qemu-img-read: %v", name, err)
		}
	}
	// Nor does the explorer's preset picker (p) offer them.
	var o ui.Options
	testApp().tuiPresets(&o)
	items, err := o.LoadPresets()
	if err != nil || len(items) == 0 {
		t.Fatalf("picker items %v, %v", items, err)
	}
	for _, it := range items {
		if it.Name == "qemu-img-read" || it.Name == "nbdcopy-blkhash" {
			t.Errorf("the picker offers %s", it.Name)
		}
	}
}
