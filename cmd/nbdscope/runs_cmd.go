package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"nbdscope/engine"
	"nbdscope/presets"
	"nbdscope/units"
)

func init() {
	extraCommands["runs"] = func(args []string) error {
		return cmdRuns(args, os.Stdout, os.Stderr)
	}
}

const runsUsage = `Usage: nbdscope runs COMMAND [ARGS]

Saved runs ('nbdscope run --save NAME').

Commands:
  list                                     name, time, preset, A and B throughput,
                                           complete or partial (and why)
  show NAME                                the summary table (markdown)
  rm NAME                                  remove a saved run
  export NAME [--format md|csv|json] [-o FILE]
                                           md: summary and events; csv: one row per
                                           sample; json: the run file (default md)
  compare RUN RUN                          the two side by side with ratios (second/first)

Runs are files NAME.json in %s
($NBDSCOPE_HOME/runs when NBDSCOPE_HOME is set).
`

// cmdRuns runs 'nbdscope runs …'.
func cmdRuns(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErrorf("runs: want a command: list, show, rm, export or compare (see 'nbdscope runs help')")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "help", "-h", "-help", "--help":
		dir := "your data directory"
		if st, err := presets.DefaultStore(); err == nil {
			dir = st.RunDir
		}
		fmt.Fprintf(stdout, runsUsage, dir)
		return nil
	}
	fs := flag.NewFlagSet("runs "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var out string
	format := presets.FormatMarkdown
	var pos []string
	var err error
	switch sub {
	case "list":
		fs.Usage = func() { fmt.Fprintln(stderr, "Usage: nbdscope runs list") }
		err = parseFlags(fs, rest)
	case "show", "rm":
		fs.Usage = func() { fmt.Fprintf(stderr, "Usage: nbdscope runs %s NAME\n", sub) }
		pos, err = storeCmdArgs(fs, rest, "NAME")
	case "export":
		fs.StringVar(&format, "format", presets.FormatMarkdown, "`FORMAT`: md, csv or json")
		fs.StringVar(&out, "o", "", "write to `FILE` instead of stdout")
		fs.Usage = func() {
			fmt.Fprintln(stderr, "Usage: nbdscope runs export NAME [--format md|csv|json] [-o FILE]")
			fs.PrintDefaults()
		}
		pos, err = storeCmdArgs(fs, rest, "NAME")
		if err == nil {
			switch strings.ToLower(format) {
			case presets.FormatMarkdown, "markdown", presets.FormatCSV, presets.FormatJSON:
			default:
				err = usageErrorf("runs export: --format %q: want md, csv or json", format)
			}
		}
	case "compare":
		fs.Usage = func() { fmt.Fprintln(stderr, "Usage: nbdscope runs compare RUN RUN") }
		pos, err = storeCmdArgs(fs, rest, "RUN", "RUN")
	default:
		return usageErrorf("runs: unknown command %q: want list, show, rm, export or compare", sub)
	}
	if err != nil {
		return err
	}

	st, err := presets.DefaultStore()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		runs, errs := st.Runs()
		for _, e := range errs {
			fmt.Fprintf(stderr, "nbdscope: runs: %v\n", e)
		}
		if len(runs) == 0 && len(errs) > 0 {
			return fmt.Errorf("no saved run could be read")
		}
		if len(runs) == 0 {
			fmt.Fprintln(stderr, "no saved runs (save one with 'nbdscope run --save NAME')")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTIME\tPRESET\tA\tB\tSTATUS")
		for _, r := range runs {
			t, p := "-", r.Preset
			if !r.Time.IsZero() {
				t = r.Time.Local().Format(time.DateTime)
			}
			if p == "" {
				p = "-"
			}
			status := "complete"
			if r.Partial {
				status = "partial: " + r.Cause
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, t, p, runsRate(r.Throughput("A")), runsRate(r.Throughput("B")), status)
		}
		return tw.Flush()
	case "show":
		rf, err := st.Run(pos[0])
		if err != nil {
			return storeCmdErr(err)
		}
		return presets.ExportRun(rf, presets.FormatMarkdown, stdout)
	case "rm":
		if err := st.RemoveRun(pos[0]); err != nil {
			return storeCmdErr(err)
		}
		fmt.Fprintf(stdout, "removed run %s\n", pos[0])
	case "export":
		rf, err := st.Run(pos[0])
		if err != nil {
			return storeCmdErr(err)
		}
		return storeCmdOutput(out, stdout, func(w io.Writer) error { return presets.ExportRun(rf, format, w) })
	case "compare":
		a, err := st.Run(pos[0])
		if err != nil {
			return storeCmdErr(err)
		}
		b, err := st.Run(pos[1])
		if err != nil {
			return storeCmdErr(err)
		}
		return presets.Compare(a, b, stdout)
	}
	return nil
}

func runsRate(f engine.Figure) string {
	if !f.Known() {
		return "n/a"
	}
	return units.FormatRate(float64(f))
}
