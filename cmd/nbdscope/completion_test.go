package main

import (
	"strings"
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/presets"
)

// complete runs cobra's hidden __complete command (what the shell scripts
// call) and returns the candidates without their descriptions, and the
// directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, errs := runApp(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errs)
	}
	var cands []string
	directive := ""
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, ":") {
			directive = l
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		cands = append(cands, name)
	}
	return cands, directive
}

func TestCompletion(t *testing.T) {
	storeCmdHome(t)
	st, err := presets.DefaultStore()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := presets.Builtin("nbdcopy")
	p.Name, p.BuiltIn, p.Description = "my-copy", false, "mine"
	if err := st.SavePreset(p, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"base", "tuned", "baseline-mac"} {
		if err := st.SaveRun(name, storeCmdReport(1, 10), false); err != nil {
			t.Fatal(err)
		}
	}
	builtins, live := len(presets.Builtins()), 0
	for _, b := range presets.Builtins() {
		if b.Sweep == nil || b.Sweep.Exec == nil {
			live++ // run and the explorer take it; a real client's sweep only sweep does
		}
	}
	has := func(list []string, want ...string) bool {
		for _, w := range want {
			if !contains(list, w) {
				return false
			}
		}
		return true
	}
	cases := []struct {
		args  []string
		want  []string // all present
		count int      // exact count when > 0
	}{
		{[]string{"--preset", ""}, []string{"my-copy", "linux-gap", "macos-gap", "sweep"}, live + 1},
		{[]string{"run", "--preset", "my"}, []string{"my-copy"}, 1},
		{[]string{"run", "--preset", "qemu-img"}, nil, -1},
		{[]string{"sweep", "--preset", "sw"}, []string{"sweep"}, 0},
		{[]string{"sweep", "--preset", "qemu-img"}, []string{"qemu-img-read", "qemu-img-write"}, 2},
		{[]string{"presets", "show", ""}, []string{"my-copy", "macos-gap"}, builtins + 1},
		{[]string{"presets", "export", "mac"}, []string{"macos-gap"}, 0},
		{[]string{"presets", "rm", ""}, []string{"my-copy"}, 1}, // built-ins cannot be removed
		{[]string{"presets", "show", "my-copy", ""}, nil, -1},   // one NAME only
		{[]string{"runs", "show", ""}, []string{"base", "tuned", "baseline-mac"}, 3},
		{[]string{"runs", "rm", "ba"}, []string{"base", "baseline-mac"}, 2},
		{[]string{"runs", "export", "t"}, []string{"tuned"}, 1},
		{[]string{"runs", "compare", "base", ""}, []string{"base", "tuned", "baseline-mac"}, 3},
		{[]string{"runs", "export", "base", "--format", ""}, []string{"md", "csv", "json"}, 0},
		{[]string{"run", "--workload-b", ""}, model.WorkloadNames(), len(model.Workloads)},
		{[]string{"--transport", ""}, []string{"unix", "tcp"}, 2},
		{[]string{"run", "--placement-a", ""}, model.PlacementNames(), len(model.Placements)},
		{[]string{"run", "--mode", ""}, []string{"alternate", "concurrent"}, 2},
		{[]string{"run", "--sndbuf", ""}, append([]string{"macos"}, model.BufLadder...), len(model.BufLadder) + 1},
		{[]string{"--sndbuf-b", "1"}, []string{"16k", "128k", "1m"}, 3},
		{[]string{"sweep", "--sndbuf", "default,64k,1"}, []string{"default,64k,16k", "default,64k,128k", "default,64k,1m"}, 3},
		{[]string{"serve", "--backend", ""}, []string{"null", "pattern", "memory", "file:"}, 4},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}, 4},
		{[]string{""}, []string{"run", "sweep", "serve", "presets", "runs", "doctor", "version", "completion"}, 0},
	}
	for _, c := range cases {
		got, directive := complete(t, c.args...)
		if !has(got, c.want...) || (c.count > 0 && len(got) != c.count) || (c.count < 0 && len(got) != 0) {
			t.Errorf("complete %q: %v, want %v (count %d)", c.args, got, c.want, c.count)
		}
		if directive == "" {
			t.Errorf("complete %q: no directive line", c.args)
		}
	}
	if got, _ := complete(t, ""); contains(got, wire.ChildCommand) {
		t.Errorf("the hidden child command is offered: %v", got)
	}
	// The shell scripts themselves.
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errs := runApp(t, "completion", sh)
		if code != 0 || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", sh, code, len(out), errs)
		}
	}
}
