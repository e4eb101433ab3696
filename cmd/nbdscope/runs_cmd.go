package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/plot"
	"nbdscope/presets"
	"nbdscope/report"
	"nbdscope/units"
)

const runsLong = `Saved runs ('nbdscope run --save NAME', or s in the explorer).
Runs are files NAME.json in %s
($NBDSCOPE_HOME/runs when NBDSCOPE_HOME is set).`

// runExporter writes a saved run in one format.
type runExporter func(rf presets.RunFile, w io.Writer) error

// runExportFormats are the formats of 'runs export --format'. A new format
// (the charts package's svg) is one more entry here.
func runExportFormats() map[string]runExporter {
	f := func(name string) runExporter {
		return func(rf presets.RunFile, w io.Writer) error { return exportRun(rf, name, w) }
	}
	return map[string]runExporter{
		formatMarkdown: f(formatMarkdown),
		"markdown":     f(formatMarkdown),
		formatCSV:      f(formatCSV),
		formatJSON:     f(formatJSON),
		formatSVG:      f(formatSVG),
	}
}

// newRunsCmd is 'nbdscope runs list|show|rm|export|compare'.
func newRunsCmd(a *app) *cobra.Command {
	dir := "your data directory"
	if st, err := a.openStore(); err == nil {
		dir = st.RunDir
	}
	formats := runExportFormats()
	var names []string
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	var out, format string
	list := storeSub("list", "Name, time, preset, A and B throughput, complete or partial (and why)", nil, nil, a.withStore(a.runsList))
	show := storeSub("show NAME", "The summary table (markdown)", []string{"NAME"}, a.completeRuns,
		a.withStore(func(st *presets.Store, args []string) error {
			rf, err := st.Run(args[0])
			if err != nil {
				return storeCmdErr(err)
			}
			return exportRun(rf, formatMarkdown, a.stdout)
		}))
	rm := a.rmSub("Remove a saved run", "run", a.completeRuns, (*presets.Store).RemoveRun)
	export := storeSub("export NAME [--format FORMAT] [-o FILE]", "md: summary and events; csv: one row per sample; json: the run file; svg: the charts over time (of a sweep: a bar per size)",
		[]string{"NAME"}, a.completeRuns,
		a.withStore(func(st *presets.Store, args []string) error {
			write, ok := formats[strings.ToLower(format)]
			if !ok {
				return usageErrorf("runs export: --format %q: want %s", format, strings.Join(names, ", "))
			}
			rf, err := st.Run(args[0])
			if err != nil {
				return storeCmdErr(err)
			}
			return storeCmdOutput(out, a.stdout, func(w io.Writer) error { return write(rf, w) })
		}))
	export.Flags().StringVar(&format, "format", formatMarkdown, "`FORMAT`: "+strings.Join(names, ", "))
	export.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	export.RegisterFlagCompletionFunc("format", completeFixed(func() []string { return names }))
	compare := storeSub("compare RUN RUN", "The two side by side with ratios (second/first), then their series charted over each other", []string{"RUN", "RUN"},
		a.completeRuns, a.withStore(a.runsCompare))
	// --rate-unit on the commands that print rates for people (the
	// markdown tables; JSON, CSV and the SVG stay as they are).
	for _, c := range []*cobra.Command{show, export, compare} {
		unit := addRateUnitFlag(c)
		args := c.Args
		// Checked before the arguments, so that a bad unit is named
		// whatever else is wrong with the command line.
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := setRateUnit(*unit, cmd.Flags().Changed("rate-unit")); err != nil {
				return err
			}
			if args != nil {
				return args(cmd, a)
			}
			return nil
		}
	}
	return storeGroup("runs", "Saved runs: list, show, rm, export, compare", fmt.Sprintf(runsLong, dir),
		list, show, rm, export, compare)
}

func (a *app) runsList(st *presets.Store, _ []string) error {
	runs, errs := st.Runs()
	for _, e := range errs {
		fmt.Fprintf(a.stderr, "nbdscope: %v\n", e) // each names its file, or the runs directory
	}
	if len(runs) == 0 && len(errs) > 0 {
		return fmt.Errorf("no saved run could be read")
	}
	if len(runs) == 0 {
		fmt.Fprintln(a.stderr, "no saved runs (save one with 'nbdscope run --save NAME')")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
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
		a, b := runsRate(r.Throughput("A")), runsRate(r.Throughput("B"))
		if o := r.Sweep; o != nil {
			// A sweep has no sides: its columns say what it found.
			a, b = "sweep", phrase.OptimumShort(o) // the optimum's verdict, as every output names it
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, t, p, a, b, status)
	}
	return tw.Flush()
}

// runsCompare prints two saved runs side by side. The terminal chart of
// their series (the charts package) goes after the table.
func (a *app) runsCompare(st *presets.Store, args []string) error {
	first, err := st.Run(args[0])
	if err != nil {
		return storeCmdErr(err)
	}
	second, err := st.Run(args[1])
	if err != nil {
		return storeCmdErr(err)
	}
	if first.Report.Sweep != nil || second.Report.Sweep != nil {
		return compareSweeps(a.stdout, first, second)
	}
	if err := report.Compare(a.stdout, reportRun(first), reportRun(second)); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	_, err = io.WriteString(a.stdout, plot.Compare(plot.Run{Name: first.Name, Report: first.Report},
		plot.Run{Name: second.Name, Report: second.Report}, terminalWidth(a.stdout)))
	return err
}

func runsRate(f model.Figure) string {
	if !f.Known() {
		return "n/a"
	}
	return units.FormatRate(float64(f))
}
