package presets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

func TestBuiltinsValidate(t *testing.T) {
	want := []string{"linux-gap", "macos-gap", "nbdcopy", "blksum", "write", "macos-write", "tcp-vs-unix", "cores", "sweep",
		"qemu-img-read", "qemu-img-write", "nbdcopy-blkhash"}
	if _, err := lookPath("blksum"); err == nil {
		want = append(want, "blksum-exec")
	}
	want = append(want, "qemu-nbd-gap", "nbdkit-gap", "qemu-nbd-read") // listed everywhere
	ps := Builtins()
	if len(ps) != len(want) {
		t.Fatalf("%d built-ins, want %d", len(ps), len(want))
	}
	for i, p := range ps {
		if p.Name != want[i] {
			t.Errorf("built-in %d is %q, want %q", i, p.Name, want[i])
		}
		if err := p.Validate(); err != nil {
			t.Errorf("built-in %s: %v", p.Name, err)
		}
		if !p.BuiltIn || p.File != "" {
			t.Errorf("built-in %s: BuiltIn=%v File=%q", p.Name, p.BuiltIn, p.File)
		}
		if p.Description == "" || p.Demonstrates == "" || strings.Contains(p.Description, "\n") {
			t.Errorf("built-in %s: description %q, demonstrates %q", p.Name, p.Description, p.Demonstrates)
		}
		if p.Config.Duration != 0 {
			t.Errorf("built-in %s: duration %v, want 0", p.Name, p.Config.Duration.D())
		}
		// Each must survive a file round trip (export/import).
		data, err := marshalPreset(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parsePreset(data)
		if err != nil {
			t.Errorf("built-in %s does not load back: %v", p.Name, err)
		} else if !reflect.DeepEqual(back.Config, p.Config) || !reflect.DeepEqual(back.Sweep, p.Sweep) {
			t.Errorf("built-in %s changed in a round trip", p.Name)
		}
	}
}

func TestBuiltinSettings(t *testing.T) {
	get := func(name string) model.Config {
		p, ok := Builtin(name)
		if !ok {
			t.Fatalf("no built-in %s", name)
		}
		return p.Config
	}
	if c := get("linux-gap"); !reflect.DeepEqual(c, model.DefaultConfig()) {
		t.Errorf("linux-gap is not model.DefaultConfig(): %+v", c)
	}
	type want struct {
		conns, req, inflight int
		a, b                 string // server sndbuf
		ca, cb               string // client sndbuf
		work                 model.Workload
		ta, tb               string
	}
	for name, w := range map[string]want{
		"linux-gap":   {1, 2 << 20, 8, "default", "2m", "default", "default", "read", "unix", "unix"},
		"macos-gap":   {1, 2 << 20, 8, "macos", "2m", "default", "default", "read", "unix", "unix"},
		"nbdcopy":     {4, 256 << 10, 64, "default", "2m", "default", "default", "read", "unix", "unix"},
		"blksum":      {1, 256 << 10, 16, "default", "2m", "default", "default", "read", "unix", "unix"},
		"write":       {1, 2 << 20, 8, "default", "default", "default", "2m", "write", "unix", "unix"},
		"macos-write": {1, 2 << 20, 8, "default", "default", "macos", "2m", "write", "unix", "unix"},
		"tcp-vs-unix": {1, 2 << 20, 8, "default", "default", "default", "default", "read", "unix", "tcp"},
		"cores":       {1, 2 << 20, 8, "default", "default", "default", "default", "read", "unix", "unix"},
		"sweep":       {1, 2 << 20, 8, "default", "2m", "default", "default", "read", "unix", "unix"},
	} {
		c := get(name)
		for i, s := range c.Sides {
			if s.Connections != w.conns || s.RequestSize != w.req || s.InFlight != w.inflight || s.Workload != w.work {
				t.Errorf("%s side %s: %d conns, %d bytes, %d in flight, %s; want %+v", name, s.Name, s.Connections, s.RequestSize, s.InFlight, s.Workload, w)
			}
			wantSnd, wantCli, wantTr := []string{w.a, w.b}[i], []string{w.ca, w.cb}[i], []string{w.ta, w.tb}[i]
			if s.SndBuf.String() != wantSnd || s.ClientSndBuf.String() != wantCli || s.Transport != model.Transport(wantTr) {
				t.Errorf("%s side %s: sndbuf %s client %s transport %s; want %s %s %s", name, s.Name, s.SndBuf, s.ClientSndBuf, s.Transport, wantSnd, wantCli, wantTr)
			}
			if s.Backend != "null" || s.Name != []string{"A", "B"}[i] {
				t.Errorf("%s side %d: backend %s name %s", name, i, s.Backend, s.Name)
			}
		}
	}
	if c := get("cores"); c.Sides[0].Placement != model.PlaceSplit || c.Sides[1].Placement != model.PlaceShared {
		t.Errorf("cores: placements %q, %q", c.Sides[0].Placement, c.Sides[1].Placement)
	}
	sw, _ := Builtin("sweep")
	if sw.Sweep == nil {
		t.Fatal("sweep has no sweep definition")
	}
	var sizes []string
	for _, b := range sw.Sweep.Sizes {
		sizes = append(sizes, b.String())
	}
	if got := strings.Join(sizes, ","); got != "default,64k,128k,256k,512k,1m,2m,4m" || sw.Sweep.Bytes != 4<<30 || sw.Sweep.Repeat != 3 || sw.Sweep.Setting != model.SetSndBuf {
		t.Errorf("sweep: sizes %s, bytes %d, repeat %d, setting %s", got, sw.Sweep.Bytes, sw.Sweep.Repeat, sw.Sweep.Setting)
	}
	for _, p := range Builtins() {
		exec := p.Sweep != nil && p.Sweep.Exec != nil
		if p.Name != "sweep" && p.Sweep != nil && !exec {
			t.Errorf("%s has a sweep", p.Name)
		}
		if exec && (p.Sweep.Exec.Warmup != 1 || !strings.Contains(p.Sweep.Exec.Command, "{uri}") || p.Sweep.Bytes != 4<<30) {
			t.Errorf("%s: exec sweep %+v, bytes %d", p.Name, *p.Sweep.Exec, p.Sweep.Bytes)
		}
	}
}

func TestBuiltinsAreCopies(t *testing.T) {
	p, _ := Builtin("sweep")
	p.Config.Sides[0].Connections = 9
	p.Sweep.Sizes[0] = model.Buf{Kind: model.BufSize, Bytes: 1 << 20}
	q, _ := Builtin("SWEEP") // case-insensitive
	if q.Config.Sides[0].Connections != 1 || q.Sweep.Sizes[0].Kind != model.BufDefault {
		t.Error("changing a returned built-in changed the built-in")
	}
	if q.Name != "sweep" {
		t.Errorf("name %q", q.Name)
	}
}

func TestValidName(t *testing.T) {
	good := []string{"a", "A", "0", "my-preset", "run_1.2", "x..y", strings.Repeat("a", 64)}
	bad := []string{"", ".", "..", "../x", "a/b", `a\b`, ".hidden", "-x", "_x", "a b", "a:b", "é", strings.Repeat("a", 65), "a\x00b", "/abs", "x/"}
	for _, n := range good {
		if err := ValidName(n); err != nil {
			t.Errorf("ValidName(%q): %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidName(n); !errors.Is(err, ErrBadName) {
			t.Errorf("ValidName(%q) = %v, want ErrBadName", n, err)
		}
	}
}

func TestEscapingNamesRefused(t *testing.T) {
	s := testStore(t)
	outside := filepath.Dir(s.PresetDir)
	p, _ := Builtin("linux-gap")
	for _, n := range []string{"../x", "a/b", ".hidden", "", "..", `..\x`, "/tmp/x"} {
		p.Name = n
		if err := s.SavePreset(p, true); !errors.Is(err, ErrBadName) {
			t.Errorf("SavePreset(%q) = %v", n, err)
		}
		if _, err := s.Preset(n); !errors.Is(err, ErrBadName) {
			t.Errorf("Preset(%q) = %v", n, err)
		}
		if err := s.RemovePreset(n); !errors.Is(err, ErrBadName) {
			t.Errorf("RemovePreset(%q) = %v", n, err)
		}
		if err := s.RenamePreset("x", n, true); !errors.Is(err, ErrBadName) {
			t.Errorf("RenamePreset(x, %q) = %v", n, err)
		}
		if _, err := s.ImportPreset(strings.NewReader(`{"version":1}`), n, true); n != "" && !errors.Is(err, ErrBadName) {
			t.Errorf("ImportPreset(%q) = %v", n, err)
		}
		if err := s.SaveRun(n, testReport(), true); !errors.Is(err, ErrBadName) {
			t.Errorf("SaveRun(%q) = %v", n, err)
		}
		if _, err := s.Run(n); !errors.Is(err, ErrBadName) {
			t.Errorf("Run(%q) = %v", n, err)
		}
		if err := s.RemoveRun(n); !errors.Is(err, ErrBadName) {
			t.Errorf("RemoveRun(%q) = %v", n, err)
		}
		if err := s.CheckRunName(n, false); !errors.Is(err, ErrBadName) {
			t.Errorf("CheckRunName(%q) = %v", n, err)
		}
	}
	// Nothing was written anywhere.
	ents, _ := os.ReadDir(outside)
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files appeared: %v", names)
	}
}

func TestStoreDirs(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	home := func() (string, error) { return "/home/u", nil }
	for _, c := range []struct {
		goos    string
		env     map[string]string
		presets string
		runs    string
	}{
		{"linux", nil, "/home/u/.config/nbdscope/presets", "/home/u/.local/share/nbdscope/runs"},
		{"linux", map[string]string{"XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d"}, "/c/nbdscope/presets", "/d/nbdscope/runs"},
		{"linux", map[string]string{"XDG_CONFIG_HOME": "rel", "XDG_DATA_HOME": "rel"}, "/home/u/.config/nbdscope/presets", "/home/u/.local/share/nbdscope/runs"},
		{"darwin", map[string]string{"XDG_CONFIG_HOME": "/c"}, "/home/u/Library/Application Support/nbdscope/presets", "/home/u/Library/Application Support/nbdscope/runs"},
		{"linux", map[string]string{"NBDSCOPE_HOME": "/n", "XDG_CONFIG_HOME": "/c"}, "/n/presets", "/n/runs"},
		{"darwin", map[string]string{"NBDSCOPE_HOME": "/n"}, "/n/presets", "/n/runs"},
	} {
		s, err := storeFor(c.goos, env(c.env), home)
		if err != nil {
			t.Fatal(err)
		}
		if s.PresetDir != c.presets || s.RunDir != c.runs {
			t.Errorf("%s %v: %s, %s; want %s, %s", c.goos, c.env, s.PresetDir, s.RunDir, c.presets, c.runs)
		}
	}
	if _, err := storeFor("linux", env(nil), func() (string, error) { return "", errors.New("no home") }); err == nil {
		t.Error("no error without a home directory")
	}

	d := t.TempDir()
	t.Setenv(HomeEnv, d)
	s, err := DefaultStore()
	if err != nil {
		t.Fatal(err)
	}
	if s.PresetDir != filepath.Join(d, "presets") || s.RunDir != filepath.Join(d, "runs") {
		t.Errorf("DefaultStore with %s=%s: %+v", HomeEnv, d, s)
	}
}

// customPreset uses every kind of field.
func customPreset(name string) Preset {
	c := model.DefaultConfig()
	c.Mode = model.ModeConcurrent
	c.Duration = model.Duration(90 * time.Second)
	c.Interval = model.Duration(500 * time.Millisecond)
	c.Sides[0].SndBuf = model.Buf{Kind: model.BufMacOS}
	c.Sides[0].ClientRcvBuf = model.Buf{Kind: model.BufSize, Bytes: 1536}
	c.Sides[0].Workload = model.WorkMixed
	c.Sides[0].ReadPercent = 30
	c.Sides[1].Target = "nbd+unix:///?socket=/tmp/nbd.sock"
	c.Sides[1].ClientSndBuf = model.Buf{Kind: model.BufSize, Bytes: 3 << 20}
	c.Sides[1].Connections = 3
	c.Sides[1].Verify = true
	for _, at := range []string{"5s:b.sndbuf=64k", "8s:a.connections=4"} {
		ch, err := model.ParseAt(at)
		if err != nil {
			panic(err)
		}
		c.Script = append(c.Script, ch)
	}
	return Preset{
		Name: name, Description: "a custom preset with <html> & \"quotes\"", Demonstrates: "everything",
		Config: c,
		Sweep:  &SweepSpec{Setting: model.SetClientSndBuf, Sizes: []model.Buf{{}, {Kind: model.BufSize, Bytes: 64 << 10}}, Bytes: 1 << 30, Repeat: 2},
	}
}

func TestPresetRoundTrip(t *testing.T) {
	s := testStore(t)
	p := customPreset("custom")
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := s.SavePreset(p, false); err != nil {
		t.Fatal(err)
	}
	got, err := s.Preset("custom")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Config, p.Config) {
		t.Errorf("config changed:\n got %+v\nwant %+v", got.Config, p.Config)
	}
	if !reflect.DeepEqual(got.Sweep, p.Sweep) || got.Description != p.Description || got.Demonstrates != p.Demonstrates || got.Name != "custom" || got.BuiltIn {
		t.Errorf("preset changed: %+v", got)
	}
	path := filepath.Join(s.PresetDir, "custom.json")
	if got.File != path {
		t.Errorf("File %q, want %q", got.File, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("file mode %v, want 0644", fi.Mode().Perm())
	}
	di, _ := os.Stat(s.PresetDir)
	if di.Mode().Perm()&^0o755 != 0 {
		t.Errorf("dir mode %v, want at most 0755", di.Mode().Perm())
	}
	// Hand-editable: indented, versioned, readable strings.
	data, _ := os.ReadFile(path)
	for _, want := range []string{"{\n  \"version\": 1,\n  \"name\": \"custom\",", `"sndbuf": "macos"`, `"duration": "1m30s"`, "<html> &", `"sizes": [`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("file lacks %q:\n%s", want, data)
		}
	}
	// In the list, after the built-ins.
	ps, errs := s.Presets()
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if n := len(Builtins()); len(ps) != n+1 || ps[n].Name != "custom" || !ps[0].BuiltIn {
		t.Errorf("list: %d presets", len(ps))
	}
}

func TestPartialPresetTakesDefaults(t *testing.T) {
	s := testStore(t)
	os.MkdirAll(s.PresetDir, 0o755)
	os.WriteFile(filepath.Join(s.PresetDir, "small.json"), []byte(`{"version": 1, "config": {"sides": [{"sndbuf": "64k"}, {"transport": "tcp"}]}}`), 0o644)
	p, err := s.Preset("small")
	if err != nil {
		t.Fatal(err)
	}
	want := model.DefaultConfig()
	want.Sides[0].SndBuf = model.Buf{Kind: model.BufSize, Bytes: 64 << 10}
	want.Sides[1].Transport = model.TransportTCP
	if !reflect.DeepEqual(p.Config, want) {
		t.Errorf("got %+v\nwant %+v", p.Config, want)
	}
}

func TestBrokenPresetFiles(t *testing.T) {
	s := testStore(t)
	if err := s.SavePreset(customPreset("good"), false); err != nil {
		t.Fatal(err)
	}
	broken := map[string]string{ // file → a word the error must contain
		"invalid.json":   `{"version": 1, "name": "x",`,
		"syntax.json":    "{\"version\": 1,\n \"name\": x}",
		"future.json":    `{"version": 99, "name": "future", "config": {"new": true}}`,
		"types.json":     `{"version": 1, "config": {"sides": [{"connections": "four"}, {}]}}`,
		"typever.json":   `{"version": "1"}`,
		"nover.json":     `{"name": "nover"}`,
		"unknown.json":   `{"version": 1, "config": {"sides": [{"conections": 4}, {}]}}`,
		"invalid2.json":  `{"version": 1, "config": {"sides": [{"connections": 0}, {}]}}`,
		"badbuf.json":    `{"version": 1, "config": {"sides": [{"sndbuf": "huge"}, {}]}}`,
		"oneside.json":   `{"version": 1, "config": {"sides": [{}]}}`,
		"array.json":     `[1, 2]`,
		"empty.json":     ``,
		"linux-gap.json": `{"version": 1}`,
		"bad name.json":  `{"version": 1}`,
		"badsweep.json":  `{"version": 1, "sweep": {"sizes": [], "bytes": 1, "repeat": 1}}`,
		"multi.json":     "{\"version\": 1, \"description\": \"a\\nb\"}",
	}
	words := map[string]string{
		"invalid.json": "unexpected end", "syntax.json": "line 2", "future.json": "version 99",
		"types.json": "connections", "typever.json": "version", "nover.json": "version",
		"unknown.json": "conections", "invalid2.json": `connections "0"`, "badbuf.json": "huge",
		"oneside.json": "2 sides", "array.json": "object", "empty.json": "empty",
		"linux-gap.json": "built-in", "bad name.json": "not a preset name", "badsweep.json": "sweep",
		"multi.json": "one line",
	}
	for f, c := range broken {
		if err := os.WriteFile(filepath.Join(s.PresetDir, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Not presets at all: ignored.
	os.WriteFile(filepath.Join(s.PresetDir, ".hidden.json"), []byte("junk"), 0o644)
	os.WriteFile(filepath.Join(s.PresetDir, ".good.json.123.tmp"), []byte("junk"), 0o644)
	os.WriteFile(filepath.Join(s.PresetDir, "README"), []byte("junk"), 0o644)
	os.Mkdir(filepath.Join(s.PresetDir, "dir.json"), 0o755)

	ps, errs := s.Presets()
	if n := len(Builtins()); len(ps) != n+1 || ps[n].Name != "good" {
		t.Errorf("%d presets loaded, want the built-ins and good", len(ps))
	}
	if len(errs) != len(broken) {
		t.Errorf("%d errors, want %d: %v", len(errs), len(broken), errs)
	}
	for _, err := range errs {
		found := false
		for f, w := range words {
			if strings.Contains(err.Error(), filepath.Join(s.PresetDir, f)+":") {
				found = true
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error for %s does not say %q: %v", f, w, err)
				}
			}
		}
		if !found {
			t.Errorf("error names no file: %v", err)
		}
	}
	// Loading one by name gives the same error.
	if _, err := s.Preset("future"); err == nil || !strings.Contains(err.Error(), "future.json") || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("Preset(future) = %v", err)
	}
	if _, err := s.Preset("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Preset(missing) = %v", err)
	}
}

func TestSaveRefusesOverwrite(t *testing.T) {
	s := testStore(t)
	p := customPreset("p")
	if err := s.SavePreset(p, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.PresetDir, "p.json")
	before, _ := os.ReadFile(path)

	q := customPreset("p")
	q.Description = "second"
	err := s.SavePreset(q, false)
	if !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) || errors.Is(err, ErrNotFound) {
		t.Fatalf("second save = %v, want ErrExists (and fs.ErrExist)", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a refused save changed the file")
	}
	noTempFiles(t, s.PresetDir)

	if err := s.SavePreset(q, true); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Preset("p")
	if got.Description != "second" {
		t.Errorf("force did not replace: %q", got.Description)
	}
	noTempFiles(t, s.PresetDir)

	// Invalid presets and built-in names are refused and change nothing.
	bad := customPreset("p")
	bad.Config.Sides[0].Connections = 0
	if err := s.SavePreset(bad, true); err == nil {
		t.Error("saved an invalid preset")
	}
	bad = customPreset("p")
	bad.Description = "two\nlines"
	if err := s.SavePreset(bad, true); err == nil {
		t.Error("saved a two-line description")
	}
	bad = customPreset("p")
	bad.Sweep.Repeat = 0
	if err := s.SavePreset(bad, true); err == nil {
		t.Error("saved a bad sweep")
	}
	bad = customPreset("p")
	bad.Config.Sides[0].SndBuf = model.Buf{Kind: model.BufSize, Bytes: 100} // would not load back
	if err := s.SavePreset(bad, true); err == nil {
		t.Error("saved a buffer that does not load back")
	}
	got, _ = s.Preset("p")
	if got.Description != "second" {
		t.Error("a refused save changed the preset")
	}
	for _, n := range []string{"linux-gap", "Linux-Gap", "SWEEP"} {
		if err := s.SavePreset(customPreset(n), true); !errors.Is(err, ErrBuiltIn) {
			t.Errorf("SavePreset(%s) = %v, want ErrBuiltIn", n, err)
		}
	}
	var zero Store
	if err := zero.SavePreset(customPreset("z"), false); err == nil {
		t.Error("a store without directories saved")
	}
	if ps, errs := zero.Presets(); len(ps) != len(Builtins()) || errs != nil {
		t.Error("a store without directories lists more than the built-ins")
	}
}

func TestRemovePreset(t *testing.T) {
	s := testStore(t)
	if err := s.SavePreset(customPreset("gone"), false); err != nil {
		t.Fatal(err)
	}
	if err := s.RemovePreset("gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Preset("gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after rm: %v", err)
	}
	if err := s.RemovePreset("gone"); !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrExists) {
		t.Errorf("second rm: %v", err)
	}
	if err := s.RemovePreset("linux-gap"); !errors.Is(err, ErrBuiltIn) {
		t.Errorf("rm built-in: %v", err)
	}
}

func TestRenamePreset(t *testing.T) {
	s := testStore(t)
	s.SavePreset(customPreset("old"), false)
	s.SavePreset(customPreset("other"), false)
	if err := s.RenamePreset("old", "new", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Preset("old"); !errors.Is(err, ErrNotFound) {
		t.Errorf("old still there: %v", err)
	}
	p, err := s.Preset("new")
	if err != nil {
		t.Fatal(err)
	}
	if want := customPreset("new"); !reflect.DeepEqual(p.Config, want.Config) {
		t.Error("rename changed the config")
	}
	data, _ := os.ReadFile(p.File)
	var f struct{ Name string }
	json.Unmarshal(data, &f)
	if f.Name != "new" {
		t.Errorf("name inside the file is %q", f.Name)
	}
	// Refuse to replace without force.
	if err := s.RenamePreset("new", "other", false); !errors.Is(err, ErrExists) {
		t.Errorf("rename onto other = %v", err)
	}
	if _, err := s.Preset("new"); err != nil {
		t.Error("a refused rename lost the preset")
	}
	if err := s.RenamePreset("new", "other", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Preset("new"); !errors.Is(err, ErrNotFound) {
		t.Error("new still there after forced rename")
	}
	if err := s.RenamePreset("other", "other", false); err != nil {
		t.Errorf("rename onto itself: %v", err)
	}
	// Case-only rename keeps the preset on any file system.
	if err := s.RenamePreset("other", "Other", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Preset("Other"); err != nil {
		t.Errorf("after case rename: %v", err)
	}
	if err := s.RenamePreset("linux-gap", "mine", false); !errors.Is(err, ErrBuiltIn) {
		t.Errorf("rename built-in: %v", err)
	}
	if err := s.RenamePreset("Other", "blksum", true); !errors.Is(err, ErrBuiltIn) {
		t.Errorf("rename onto built-in: %v", err)
	}
	if err := s.RenamePreset("missing", "x", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename missing: %v", err)
	}
	noTempFiles(t, s.PresetDir)
}

func TestExportImport(t *testing.T) {
	s := testStore(t)
	var b bytes.Buffer
	if err := s.ExportPreset("macos-gap", &b); err != nil {
		t.Fatal(err)
	}
	exported := b.String()
	if _, err := s.ImportPreset(strings.NewReader(exported), "", false); !errors.Is(err, ErrBuiltIn) {
		t.Errorf("import under the built-in's name = %v", err)
	}
	p, err := s.ImportPreset(strings.NewReader(exported), "my-mac", false)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := Builtin("macos-gap")
	got, err := s.Preset("my-mac")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Config, orig.Config) || got.Description != orig.Description || p.Name != "my-mac" || p.File != got.File || got.BuiltIn {
		t.Errorf("import changed the preset: %+v", got)
	}
	if _, err := s.ImportPreset(strings.NewReader(exported), "my-mac", false); !errors.Is(err, ErrExists) {
		t.Errorf("second import = %v", err)
	}
	if _, err := s.ImportPreset(strings.NewReader(exported), "my-mac", true); err != nil {
		t.Errorf("forced import: %v", err)
	}
	// A user preset exports under its own name and imports by it.
	b.Reset()
	if err := s.ExportPreset("my-mac", &b); err != nil {
		t.Fatal(err)
	}
	s2 := testStore(t)
	if p, err := s2.ImportPreset(&b, "", false); err != nil || p.Name != "my-mac" {
		t.Errorf("import into another store: %v, %v", p.Name, err)
	}
	if _, err := s.ImportPreset(strings.NewReader(`{"version":1}`), "", false); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("import without a name = %v", err)
	}
	if _, err := s.ImportPreset(strings.NewReader(`{"version":99}`), "x", false); err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("import of a future version = %v", err)
	}
	if err := s.ExportPreset("missing", &b); !errors.Is(err, ErrNotFound) {
		t.Errorf("export missing = %v", err)
	}
}

func TestConcurrentSaves(t *testing.T) {
	s := testStore(t)
	const n = 20

	// Different names: all land.
	errs := concurrently(n, func(i int) error { return s.SavePreset(customPreset(fmt.Sprintf("p%02d", i)), false) })
	for i, err := range errs {
		if err != nil {
			t.Errorf("save p%02d: %v", i, err)
		}
	}
	ps, lerrs := s.Presets()
	if len(lerrs) != 0 || len(ps) != len(Builtins())+n {
		t.Errorf("%d presets, errors %v", len(ps), lerrs)
	}

	// One name without force: exactly one wins.
	errs = concurrently(n, func(i int) error {
		p := customPreset("same")
		p.Description = fmt.Sprintf("writer %d", i)
		return s.SavePreset(p, false)
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("writers %d and %d both won", winner, i)
			}
			winner = i
		case !errors.Is(err, ErrExists):
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	got, err := s.Preset("same")
	if err != nil || got.Description != fmt.Sprintf("writer %d", winner) {
		t.Errorf("the file holds %q (%v), want writer %d", got.Description, err, winner)
	}

	// One name with force: all succeed, the file is one whole preset.
	errs = concurrently(n, func(i int) error {
		p := customPreset("forced")
		p.Description = fmt.Sprintf("writer %d", i)
		return s.SavePreset(p, true)
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("forced writer %d: %v", i, err)
		}
	}
	if got, err := s.Preset("forced"); err != nil || !strings.HasPrefix(got.Description, "writer ") {
		t.Errorf("forced: %q, %v", got.Description, err)
	}
	noTempFiles(t, s.PresetDir)
}

func TestWriteFileKeepsOriginalOnFailure(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	s := testStore(t)
	if err := s.SavePreset(customPreset("keep"), false); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(s.PresetDir, "keep.json"))
	os.Chmod(s.PresetDir, 0o555)
	defer os.Chmod(s.PresetDir, 0o755)
	p := customPreset("keep")
	p.Description = "changed"
	if err := s.SavePreset(p, true); err == nil {
		t.Fatal("save into a read-only directory succeeded")
	}
	after, _ := os.ReadFile(filepath.Join(s.PresetDir, "keep.json"))
	if !bytes.Equal(before, after) {
		t.Error("a failed save changed the file")
	}
}

// blksum-exec is offered only where blksum is installed; asked for by name
// elsewhere, the error names the missing program and the way around it.
func TestBlksumExecNeedsBlksum(t *testing.T) {
	s := testStore(t)
	defer func(f func(string) (string, error)) { lookPath = f }(lookPath)
	lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	_, err := s.Preset("blksum-exec")
	if err == nil || !strings.Contains(err.Error(), "blksum, which is not on PATH") || !strings.Contains(err.Error(), "--exec 'blksum {uri}'") {
		t.Fatalf("without blksum: %v", err)
	}
	lookPath = func(string) (string, error) { return "/usr/bin/blksum", nil }
	p, err := s.Preset("blksum-exec")
	if err != nil || p.Sweep == nil || p.Sweep.Exec == nil || p.Sweep.Exec.Command != "blksum {uri}" {
		t.Fatalf("with blksum: %+v, %v", p, err)
	}
}

// The real-server presets are offered only where their programs are
// installed; asked for by name elsewhere, the error names the program.
func TestRealServerPresetsNeedTheirPrograms(t *testing.T) {
	s := testStore(t)
	defer func(f func(string) (string, error)) { lookPath = f }(lookPath)
	lookPath = func(prog string) (string, error) {
		if prog == "qemu-nbd" {
			return "", exec.ErrNotFound
		}
		return "/usr/bin/" + prog, nil
	}
	_, err := s.Preset("qemu-nbd-read")
	if err == nil || !strings.Contains(err.Error(), "runs qemu-nbd, not on PATH") {
		t.Fatalf("without qemu-nbd: %v", err)
	}
	if p, err := s.Preset("nbdkit-gap"); err != nil || p.Config.Sides[1].Server != nbdkitServer || p.Config.Sides[1].SndBuf != buf2M {
		t.Fatalf("nbdkit-gap with nbdkit: %+v, %v", p, err)
	}
}
