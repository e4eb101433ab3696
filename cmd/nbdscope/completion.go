package main

import (
	"strings"

	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/presets"
)

// Shell completion: cobra's 'completion bash|zsh|fish|powershell' scripts
// call the hidden '__complete' command, which asks these functions. They
// read the real store, so a user's own presets and runs are offered.

// completePresets offers preset names (built-in and user); for --preset of
// run and the explorer, not those that sweep a real client, which only
// sweep runs (presetConfig refuses them).
func (a *app) completePresets(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	liveOnly := cmd.Flags().Lookup("preset") != nil && cmd.Name() != "sweep"
	return a.completePresetsWhere(toComplete, func(p presets.Preset) bool { return !liveOnly || !p.SweepsClient() })
}

// completeUserPresets offers only user presets (rm, rename: built-ins are
// read-only).
func (a *app) completeUserPresets(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completePresetsWhere(toComplete, func(p presets.Preset) bool { return !p.BuiltIn })
}

// completePresetsWhere offers the presets keep lets through, each with its
// description.
func (a *app) completePresetsWhere(toComplete string, keep func(presets.Preset) bool) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeStored(toComplete, func(st *presets.Store) []cobra.Completion {
		ps, _ := st.Presets()
		var out []cobra.Completion
		for _, p := range ps {
			if keep(p) {
				out = append(out, cobra.CompletionWithDesc(p.Name, p.Description))
			}
		}
		return out
	})
}

// completeRuns offers saved run names.
func (a *app) completeRuns(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeStored(toComplete, func(st *presets.Store) []cobra.Completion {
		runs, _ := st.Runs()
		var out []cobra.Completion
		for _, r := range runs {
			out = append(out, r.Name)
		}
		return out
	})
}

// completeStored offers the names list gives from the user's store that
// start with toComplete (a name with a description keeps it).
func (a *app) completeStored(toComplete string, list func(*presets.Store) []cobra.Completion) ([]cobra.Completion, cobra.ShellCompDirective) {
	st, err := a.openStore()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, c := range list(st) {
		name, _, _ := strings.Cut(c, "\t")
		if strings.HasPrefix(name, toComplete) {
			out = append(out, c)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeArgs completes the first n positional arguments with f and
// nothing after them.
func completeArgs(n int, f cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(cmd, args, toComplete)
	}
}

// completeBufList completes a comma-separated list of buffer sizes (sweep
// --sndbuf default,64k,…): the last item from the ladder.
func completeBufList(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, v := range append([]string{"macos"}, model.BufLadder...) {
		if strings.HasPrefix(v, last) {
			out = append(out, head+v)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completionShells are the shells cobra writes completion scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// setupCompletionCmd adds cobra's 'completion SHELL' now (cobra adds it
// lazily) and makes a missing or unknown shell, or an extra argument, bad
// usage (exit 2) that names the shells, instead of help and exit 0.
func setupCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root {
		return
	}
	want := strings.Join(completionShells, ", ")
	comp.Args = cobra.ArbitraryArgs
	comp.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErrorf("%s: want a shell: %s", cmd.CommandPath(), want)
		}
		if args[0] == "help" && len(args) == 1 {
			return cmd.Help()
		}
		if args[0] == "help" {
			if sub, _, err := cmd.Find(args[1:]); err == nil && sub != cmd {
				return sub.Help()
			}
			args = args[1:]
		}
		return usageErrorf("%s: unknown shell %q: want %s", cmd.CommandPath(), args[0], want)
	}
	comp.Annotations = map[string]string{groupAnnotation: "true"}
	for _, sh := range comp.Commands() {
		sh.Args = noArgs
	}
}
