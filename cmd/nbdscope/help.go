package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sideGroupAnnotation marks the flags --X-a and --X-b as members of the
// group of --X, so that help prints the three on one line.
const sideGroupAnnotation = "nbdscope_side_group"

// groupAnnotation marks a command that only groups others (presets,
// runs): its usage is "GROUP COMMAND", not "GROUP [flags]".
const groupAnnotation = "nbdscope_group"

// usageTemplate is cobra's, with grouped flags and the exit statuses.
const usageTemplate = `Usage:{{if and .Runnable (ne (index .Annotations "` + groupAnnotation + `") "true")}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} COMMAND{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

{{groupedFlags .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

Global flags:
{{flagLines .InheritedFlags}}{{end}}

{{exitStatus .}}{{if .HasAvailableSubCommands}}

Run '{{.CommandPath}} help COMMAND' or '{{.CommandPath}} COMMAND --help' for a command's help.{{end}}
`

// helpTemplate prints the long description, then the usage, on stdout.
const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}`

func setHelp(root *cobra.Command) {
	cobra.AddTemplateFunc("groupedFlags", groupedFlags)
	cobra.AddTemplateFunc("flagLines", flagLines)
	cobra.AddTemplateFunc("exitStatus", exitStatusLine)
	root.SetUsageTemplate(usageTemplate)
	root.SetHelpTemplate(helpTemplate)
}

// groupedFlags renders a command's flags in two sections: the per-side
// settings, one line per group ("--sndbuf, --sndbuf-a, --sndbuf-b SIZE")
// with its help below, then the other flags like pflag's FlagUsages.
func groupedFlags(fs *pflag.FlagSet) string {
	var b strings.Builder
	sides := false
	fs.VisitAll(func(f *pflag.Flag) {
		g := f.Annotations[sideGroupAnnotation]
		if f.Hidden || len(g) == 0 || g[0] != f.Name {
			return
		}
		if !sides {
			b.WriteString("Per-side flags (--X sets both sides, --X-a side A, --X-b side B, winning over --X):\n")
			sides = true
		}
		varname, usage := flagText(f)
		short := ""
		if f.Shorthand != "" {
			short = "-" + f.Shorthand + ", "
		}
		fmt.Fprintf(&b, "  %s--%s, --%s-a, --%s-b %s\n        %s\n", short, f.Name, f.Name, f.Name, varname, usage)
	})
	if sides {
		b.WriteByte('\n')
	}
	b.WriteString("Flags:\n")
	b.WriteString(flagLines(fs))
	return b.String()
}

// flagLines renders the flags that are not in a per-side group.
func flagLines(fs *pflag.FlagSet) string {
	type line struct{ left, usage string }
	var lines []line
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || len(f.Annotations[sideGroupAnnotation]) > 0 {
			return
		}
		varname, usage := flagText(f)
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		switch {
		case varname != "" && f.NoOptDefVal != "":
			left += "[=" + varname + "]" // the value is optional, so it must follow '=' (--stats=500ms)
		case varname != "":
			left += " " + varname
		}
		lines = append(lines, line{left, usage})
		width = max(width, len(left))
	})
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%-*s   %s", width, l.left, l.usage)
	}
	return b.String()
}

// flagText is a flag's value name and help text: the value name is the
// back-quoted word of the usage (pflag's convention), shown once.
func flagText(f *pflag.Flag) (varname, usage string) {
	varname, usage = pflag.UnquoteUsage(f)
	switch varname {
	case "bool":
		varname = ""
	case "stringArray":
		varname = "VALUE"
	}
	if len(f.Annotations[sideGroupAnnotation]) > 0 {
		usage = strings.TrimPrefix(usage, varname+" ") // "`SIZE` server SO_SNDBUF…"
	}
	if showDefault(f) {
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	return varname, usage
}

func showDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return false
	}
	return f.Name != "help" && f.Name != "version"
}

// newHelpCmd is 'nbdscope help [COMMAND…]': the command's help on stdout;
// an unknown command is bad usage (exit 2), not the root's help.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "Help about any command",
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			parent, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, c := range parent.Commands() {
				if c.IsAvailableCommand() && strings.HasPrefix(c.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			c, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 || c.Hidden {
				return usageErrorf("help: unknown command %q", strings.Join(args, " "))
			}
			c.InitDefaultHelpFlag() // as COMMAND --help shows it
			return c.Help()
		},
	}
}
