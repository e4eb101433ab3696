package main

import (
	"strings"

	"github.com/spf13/cobra"

	"nbdscope/engine/child"
	"nbdscope/engine/wire"
	"nbdscope/internal/buildinfo"
)

// newRootCmd builds the whole command tree, in this one place, each command
// given the app. The root itself is the explorer (TUI).
func newRootCmd(a *app) *cobra.Command {
	info := buildinfo.Read()
	root := newTUICmd(a)
	root.Version = info.Short()
	root.SetVersionTemplate(info.String())
	root.Flags().BoolP("version", "v", false, "print the version, revision, Go version and platform")
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	setHelp(root)
	root.SetHelpCommand(newHelpCmd(root))
	root.AddCommand(
		newServeCmd(a),
		newRunCmd(a),
		newSweepCmd(a),
		newCalibrateCmd(a),
		newDoctorCmd(a),
		newPresetsCmd(a),
		newRunsCmd(a),
		newVersionCmd(a, info),
		newChildCmd(),
	)
	refuseRepeats(root, &a.args) // a short flag given twice is bad usage (shortflags.go)
	root.CompletionOptions.HiddenDefaultCmd = false
	root.CompletionOptions.DisableDescriptions = false
	setupCompletionCmd(root)
	return root
}

// newVersionCmd is 'nbdscope version', the same text as --version.
func newVersionCmd(a *app, info buildinfo.Info) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, revision, Go version and platform",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write([]byte(info.String()))
			return err
		},
	}
}

// newChildCmd is the hidden entry point of the server and load processes
// the engine spawns (this same binary).
func newChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:                wire.ChildCommand,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE:               func(_ *cobra.Command, args []string) error { return child.RunChild(args) },
	}
}

// noArgs refuses positional arguments as bad usage (exit 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s: unexpected argument %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// exactArgs wants one positional argument per name.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usageErrorf("%s: want %s", cmd.CommandPath(), joinNames(names))
		}
		return nil
	}
}

func joinNames(names []string) string { return strings.Join(names, " ") }

// exclusive refuses two or more of the named flags set together (exit 2).
func exclusive(cmd *cobra.Command, names ...string) error {
	var set []string
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			set = append(set, "--"+n)
		}
	}
	if len(set) > 1 {
		return usageErrorf("%s: %s exclude each other; choose one", cmd.CommandPath(), strings.Join(set, " and "))
	}
	return nil
}
