package main

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/internal/buildinfo"
	"nbdscope/model"
)

// runApp runs a command line on an app with in-memory streams.
func runApp(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := newApp(strings.NewReader(""), &out, &errs).execute(args)
	return code, out.String(), errs.String()
}

func TestHelpOnStdout(t *testing.T) {
	storeCmdHome(t)
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, errs := runApp(t, args...)
		if code != 0 || errs != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
		for _, want := range []string{"Commands:", "  sweep ", "  serve ", "  run ", "  presets ", "  runs ", "  doctor ",
			"  version ", "  completion ", "--preset NAME", "Exit status:\n  0    quit (q, ctrl+c, SIGINT or SIGTERM)\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out)
			}
		}
		n := 0 // as `nbdscope --help | grep -c sndbuf` counts
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "sndbuf") {
				n++
			}
		}
		if n > 3 {
			t.Errorf("%v: %d lines name sndbuf, want the groups on one line each:\n%s", args, n, out)
		}
		if strings.Contains(out, " -sndbuf") {
			t.Errorf("single-dash flag in help:\n%s", out)
		}
	}
	// Every per-side setting is one line, built from the one list.
	_, out, _ := runApp(t, "--help")
	for _, s := range model.Settings() {
		if s.Flag != model.FlagSide {
			continue
		}
		line := "--" + s.Name + ", --" + s.Name + "-a, --" + s.Name + "-b " + s.Var
		if strings.Count(out, line) != 1 {
			t.Errorf("help lacks the group line %q", line)
		}
	}
}

func TestHelpForCommand(t *testing.T) {
	storeCmdHome(t)
	for _, cmd := range []string{"sweep", "run", "serve", "doctor", "presets", "runs", "version"} {
		_, viaHelp, _ := runApp(t, "help", cmd)
		code, viaFlag, errs := runApp(t, cmd, "--help")
		if code != 0 || errs != "" || viaHelp != viaFlag {
			t.Errorf("%s: 'help %s' and '%s --help' differ or fail (exit %d, stderr %q)", cmd, cmd, cmd, code, errs)
		}
		if !strings.Contains(viaHelp, "nbdscope "+cmd) || !strings.Contains(viaHelp, "Exit status:") {
			t.Errorf("help %s:\n%s", cmd, viaHelp)
		}
	}
	_, out, _ := runApp(t, "help", "sweep")
	for _, want := range []string{"--bytes SIZE", "--repeat N", "--sndbuf SIZES", "--markdown"} {
		if !strings.Contains(out, want) {
			t.Errorf("help sweep lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runApp(t, "serve", "--help")
	for _, want := range []string{"-k, --socket PATH", "-r, --read-only", "-x, --export NAME", "-e, --max-connections N", "-v, --verbose"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runApp(t, "presets", "help", "rename")
	if !strings.Contains(out, "--force") {
		t.Errorf("presets help rename:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	want := buildinfo.Read().String()
	for _, args := range [][]string{{"--version"}, {"version"}, {"-v"}} {
		code, out, _ := runApp(t, args...)
		if code != 0 || out != want {
			t.Errorf("%v: exit %d, %q; want %q", args, code, out, want)
		}
	}
	if !strings.Contains(want, model.Version) || !strings.Contains(want, "revision ") {
		t.Errorf("--version %q does not carry the reports' nbdscope_version %q", want, model.Version)
	}
}

// TestExitCodes: the same statuses in every command.
func TestExitCodes(t *testing.T) {
	storeCmdHome(t)
	for _, c := range []struct {
		code int
		args []string
	}{
		{2, []string{"bogus"}},
		{2, []string{"run", "--bogus"}},
		{2, []string{"run", "-sndbuf", "2m"}}, // single dash is not a flag any more
		{2, []string{"run", "extra"}},
		{2, []string{"run", "--json", "--csv"}},
		{2, []string{"run", "--sndbuf", "huge"}},
		{2, []string{"run", "--preset", "x/y"}},
		{2, []string{"run", "--preset", "nosuch"}}, // an unknown name is a bad value (issue 21)
		{2, []string{"sweep", "--preset", "nosuch"}},
		{2, []string{"--preset", "nosuch"}},
		{2, []string{"sweep", "--json", "--markdown"}},
		{2, []string{"sweep", "--repeat", "0"}},
		{2, []string{"sweep", "--bytes", "lots"}},
		{2, []string{"serve", "-k", "/tmp/x.sock", "--listen", "127.0.0.1:0"}},
		{2, []string{"serve", "--size", "huge"}},
		{2, []string{"serve", "--size", "1000"}}, // not a multiple of 512: was 1, refused only by the backend
		{2, []string{"serve", "--backend", "bogus"}},
		{2, []string{"serve", "--backend", "file:"}},
		{2, []string{"completion", "tcsh"}}, // was help and 0
		{2, []string{"completion"}},
		{2, []string{"completion", "bash", "extra"}}, // was cobra's error and 1
		{2, []string{"completion", "help", "tcsh"}},
		{0, []string{"completion", "bash"}},
		{0, []string{"completion", "help", "zsh"}},
		{2, []string{"doctor", "extra"}},
		{2, []string{"version", "extra"}},
		{2, []string{"--window", "1s"}},
		{0, []string{"help", "runs"}},
		{0, []string{"help", "runs", "export"}},
		{2, []string{"help", "bogus"}},
		{2, []string{"help", "runs", "bogus"}},
	} {
		code, _, errs := runApp(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, errs)
		}
		if c.code != 0 && !strings.HasPrefix(errs, "nbdscope: ") {
			t.Errorf("%v: stderr %q does not say why", c.args, errs)
		}
		if strings.HasPrefix(errs, "nbdscope: nbdscope") {
			t.Errorf("%v: stderr %q names the program twice", c.args, errs)
		}
	}
}
