package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The tables of TestEveryCommandRefusesBadInput. Flags are named without
// dashes; a per-side flag (--sndbuf-a) is looked up by its group's name
// (sndbuf). A key "COMMAND flag" (sweep sndbuf) wins for that command.

// badValues are, for each flag that takes a value, values that must be
// refused: exit 2, the flag or the value named on stderr, nothing run.
var badValues = map[string][]string{
	"sndbuf": {"huge", "", "512"}, "client-sndbuf": {"huge"}, "client-rcvbuf": {"1t"}, "server-rcvbuf": {"1t"},
	"sweep sndbuf": {"huge", "", "64k,,2m"}, "calibrate sndbuf": {"huge", "", "default,,2m"}, "calibrate client": {"", "qemu-img 'unterminated"}, "sweep client-sndbuf": {"huge", ","}, "sweep client-rcvbuf": {"64k,1t"},
	"connections": {"0", "65", "many", ""}, "request-size": {"1000", "64m"}, "in-flight": {"0", "257"},
	"workload": {"sideways"}, "read-percent": {"101", "-1"}, "consume": {"eat"}, "reader": {"spin"}, "fill-source": {"guess"}, "hash-threads": {"0", "65"},
	"placement": {"everywhere"}, "transport": {"pigeon"}, "target": {"http://example.com/"}, "exec": {"'unclosed"}, "server": {"'unclosed", "qemu-nbd -k /tmp/no-placeholder"},
	"sweep exec": {"'unclosed", ""},
	"backend":    {"bogus", "file:", "file:/nonexistent-dir/x.img"}, "size": {"1000", "huge", "0"},
	"mode": {"sideways", ""}, "interval": {"0s", "1ns", "2m", "soon"}, "duration": {"0s", "-1s", "soon"},
	"at":     {"5s", "5s:c.sndbuf=2m", "5s:b.sndbuf=huge", "5s:b.size=1g", "20s:b.sndbuf=2m"},
	"preset": {"nosuch", "x/y"}, "save": {"../x", ".hidden"}, "window": {"1s", "2h"},
	"bytes": {"lots", "0", "-1g"}, "repeat": {"0", "101"}, "warmup": {"-1", "1"},
	"listen": {"nohost", "127.0.0.1:99999"}, "serve backend": {"bogus", "file:", "file:/nonexistent-dir/x.img"},
	"serve size": {"1000", "huge"}, "serve sndbuf": {"huge", "0"}, "fill": {"256", "x"}, "max-connections": {"0"},
	"stats": {"1ns", "2h", "soon", ""}, "stats-json": {"stats.json"}, // --stats-json without --stats
	"presets import name": {"../x", "linux-gap"}, "runs export format": {"xml"},
	"export-json": {"", "/nonexistent-dir/x.json"}, "export-csv": {"/nonexistent-dir/x.csv"}, "export-markdown": {"", "/"},
	"export-hyperfine": {"/nonexistent-dir/h.json"}, "rate-unit": {"gb", ""},
	"port": {"-1", "65536", "x"}, "bind": {"", "example.com"}, "format": {"qcow2", ""},
}

// anyValue are the flags whose every value is taken, and why.
var anyValue = map[string]string{
	"socket":      "a path: whether it can be listened on is the OS's to say (a failure, exit 1)",
	"export":      "any export name is valid NBD",
	"description": "free text",
	"output":      "a path: a write that fails is a failure (exit 1)",
}

// argsFor are valid arguments for the commands that need them, so that
// a bad flag value is the only fault (the names exist: see setup).
var argsFor = map[string][]string{
	"presets import": {"@preset"}, "runs export": {"base"},
}

// badArgs are, per command, argument lists that must be refused: an
// unknown name or shell, a missing file, one too many or too few.
var badArgs = map[string][][]string{
	"":               {{"bogus"}},
	"presets":        {{}, {"bogus"}},
	"presets show":   {{"nosuch"}, {"../x"}, {}},
	"presets rm":     {{"nosuch"}, {"linux-gap"}},
	"presets rename": {{"nosuch", "new"}, {"linux-gap", "x"}, {"@user", "linux-gap"}, {"@user", "@user2"}, {"@user"}},
	"presets export": {{"nosuch"}, {"a", "b"}},
	"presets import": {{"/nonexistent-dir/p.json"}, {"@broken"}, {}},
	"runs":           {{}, {"bogus"}},
	"runs show":      {{"nosuch"}, {}},
	"runs rm":        {{"nosuch"}},
	"runs export":    {{"nosuch"}},
	"runs compare":   {{"nosuch", "base"}, {"base"}},
	"completion":     {{}, {"tcsh"}},
	"help":           {{"bogus"}, {"runs", "bogus"}},
}

// TestEveryCommandRefusesBadInput walks every command and subcommand and
// runs each, as a process, with an unknown flag, with each flag's bad
// values and with bad arguments: each must exit 2 with a message on
// stderr, before anything runs (issue 21: the exit-status table, now in docs/cli.md,
// held for some commands only). Every value flag must have bad values or
// a reason it takes any; a command with no entry in badArgs must refuse
// an extra argument.
func TestEveryCommandRefusesBadInput(t *testing.T) {
	subst := walkSetup(t)
	used := map[string]bool{}
	root := newRootCmd(testApp())
	root.InitDefaultHelpCmd() // cobra adds 'help' when it runs; walk it too
	walkCommands(root, func(path []string, c *cobra.Command) {
		key := strings.Join(path, " ")
		refused(t, append(path, "--no-such-flag"), "unknown flag: --no-such-flag")
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" || f.Name == "help" {
				return
			}
			base := f.Name
			if g := f.Annotations[sideGroupAnnotation]; len(g) > 0 {
				base = g[0]
			}
			vals, ok := badValues[key+" "+base]
			if ok {
				used[key+" "+base] = true
			} else if vals, ok = badValues[base]; ok {
				used[base] = true
			}
			if _, any := anyValue[base]; len(vals) == 0 && !any {
				t.Errorf("%q --%s: no bad value to try: add one to badValues, or the reason it takes any to anyValue", key, f.Name)
			}
			if base != f.Name && len(vals) > 1 {
				vals = vals[:1] // --X-a and --X-b parse as --X does
			}
			for _, v := range vals {
				args := append(append(append([]string(nil), path...), "--"+f.Name+"="+v), subst(argsFor[key])...)
				refused(t, args, "--"+f.Name, base, v)
			}
		})
		bad, ok := badArgs[key]
		if !ok {
			bad = [][]string{{"extra"}}
		}
		used["args "+key] = true
		for _, a := range bad {
			refused(t, append(path, subst(a)...), append([]string{key}, subst(a)...)...)
		}
	})
	for k := range badValues {
		if !used[k] {
			t.Errorf("badValues[%q] is not a flag of any command", k)
		}
	}
	for k := range badArgs {
		if !used["args "+k] {
			t.Errorf("badArgs[%q] is not a command", k)
		}
	}
}

// refused runs args and wants exit 2 and a message on stderr that names
// one of names (a flag, its value, the command or an argument; a name of
// under three characters is not looked for).
func refused(t *testing.T, args []string, names ...string) {
	t.Helper()
	code, _, errs := runBin(t, args...)
	named := false
	for _, n := range names {
		n = strings.Trim(n, "'")
		named = named || len(n) >= 3 && strings.Contains(errs, n)
	}
	if code != exitUsage || !strings.HasPrefix(errs, "nbdscope: ") || !named {
		t.Errorf("nbdscope %q: exit %d, stderr %q; want 2 and a message naming one of %q", args, code, errs, names)
	}
}

// walkSetup makes the store the tables refer to (a user preset, a run
// "base", a preset file to import and a broken one) and returns the
// function that replaces their @names in an argument list.
func walkSetup(t *testing.T) func([]string) []string {
	storeCmdHome(t)
	t.Setenv(asBinaryEnv, "1") // should anything start, its children are this binary
	saveTestRun(t, "base", storeCmdReport(1, 10))
	dir := t.TempDir()
	preset, broken := filepath.Join(dir, "p.json"), filepath.Join(dir, "broken.json")
	if code, _, errs := runApp(t, "presets", "export", "macos-gap", "-o", preset); code != 0 {
		t.Fatalf("presets export: %s", errs)
	}
	os.WriteFile(broken, []byte(`{"version": 1, "name": "b", "config": {"mode": "sideways"}}`), 0o644)
	for _, n := range []string{"user", "user2"} {
		if code, _, errs := runApp(t, "presets", "import", preset, "--name", n); code != 0 {
			t.Fatalf("presets import: %s", errs)
		}
	}
	names := map[string]string{"@preset": preset, "@broken": broken, "@user": "user", "@user2": "user2"}
	return func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = a
			if v, ok := names[a]; ok {
				out[i] = v
			}
		}
		return out
	}
}

// walkCommands calls f with the path (as typed after nbdscope) of every
// command a user can run, the root ("") included, hidden ones not.
func walkCommands(root *cobra.Command, f func(path []string, c *cobra.Command)) {
	var walk func(path []string, c *cobra.Command)
	walk = func(path []string, c *cobra.Command) {
		f(path, c)
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != cobra.ShellCompRequestCmd {
				walk(append(append([]string(nil), path...), sub.Name()), sub)
			}
		}
	}
	walk(nil, root)
}
