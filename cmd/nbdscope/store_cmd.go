package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"nbdscope/presets"
)

// storeGroup builds 'nbdscope presets' and 'nbdscope runs': a group of
// subcommands over the store. The group has no action of its own: without
// a command, or with an unknown one, it is bad usage (exit 2); 'GROUP help
// [COMMAND]' prints help like 'nbdscope help GROUP [COMMAND]'.
func storeGroup(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{
		Use:         use + " COMMAND",
		Short:       short,
		Long:        long,
		Annotations: map[string]string{groupAnnotation: "true"},
		Args:        cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && args[0] == "help" {
				if len(args) > 1 {
					if sub, _, err := cmd.Find(args[1:]); err == nil && sub != cmd {
						return sub.Help()
					}
					return usageErrorf("%s: unknown command %q", cmd.CommandPath(), args[1])
				}
				return cmd.Help()
			}
			names := ""
			for i, s := range cmd.Commands() {
				if i > 0 {
					names += ", "
				}
				names += s.Name()
			}
			if len(args) == 0 {
				return usageErrorf("%s: want a command: %s (see '%s help')", cmd.CommandPath(), names, cmd.CommandPath())
			}
			return usageErrorf("%s: unknown command %q: want %s", cmd.CommandPath(), args[0], names)
		},
	}
	g.AddCommand(subs...)
	return g
}

// storeSub is one subcommand of a store group: its positional arguments
// (named for help and errors), their completion and its action.
// rmSub is a store group's rm NAME: remove removes the named preset or
// run (kind), and the command says so.
func (a *app) rmSub(short, kind string, complete cobra.CompletionFunc, remove func(*presets.Store, string) error) *cobra.Command {
	return storeSub("rm NAME", short, []string{"NAME"}, complete, a.withStore(func(st *presets.Store, args []string) error {
		if err := remove(st, args[0]); err != nil {
			return storeCmdErr(err)
		}
		fmt.Fprintf(a.stdout, "removed %s %s\n", kind, args[0])
		return nil
	}))
}

func storeSub(use, short string, names []string, complete cobra.CompletionFunc, run func(cmd *cobra.Command, args []string) error) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(names...),
		RunE:  run,
	}
	if complete != nil {
		c.ValidArgsFunction = completeArgs(len(names), complete)
	} else if len(names) == 0 {
		c.ValidArgsFunction = cobra.NoFileCompletions
	}
	return c
}

// withStore is a store subcommand's action: it opens the store and runs
// run on it with the positional arguments.
func (a *app) withStore(run func(st *presets.Store, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		st, err := a.openStore()
		if err != nil {
			return err
		}
		return run(st, args)
	}
}

// storeCmdOutput writes with write to stdout, or to the file path (created 0644,
// replaced whole) when path is set and not "-".
func storeCmdOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
