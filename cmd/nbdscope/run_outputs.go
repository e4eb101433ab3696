package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/report"
)

// runExports are the formats run writes to files (--export-FORMAT).
var runExports = []string{fmtJSON, fmtCSV, fmtMarkdown}

// runStdout are the flags that send a format to stdout instead of the
// summary table: the three exports', and the two that write as the run
// goes (--intervals, whose lines the table follows; --json-stream).
var runStdout = []stdoutChoice{{"json", fmtJSON}, {"csv", fmtCSV}, {"markdown", fmtMarkdown},
	{"intervals", fmtText}, {"json-stream", fmtJSONStream}}

// runOutputFlags are run's output flags beside the exports.
type runOutputFlags struct {
	asMD, intervals, jsonStream bool
	rateUnit                    *string
	exports                     *exportFlags
	outs                        []destination
}

// addRunOutputFlags adds --markdown, --intervals, --json-stream, the
// exports and --rate-unit.
func addRunOutputFlags(cmd *cobra.Command, o *runOutputFlags) {
	fs := cmd.Flags()
	fs.BoolVar(&o.asMD, "markdown", false, "print the summary as markdown (as 'runs export --format md')")
	fs.BoolVar(&o.intervals, "intervals", false, "print a line per side per second (per interval with -i) as the run goes, and each change as it takes effect (iperf3's), then the summary")
	fs.BoolVar(&o.jsonStream, "json-stream", false, "print one JSON object per line as the run goes: start, each sample, event, warning and crash, then the summary")
	o.exports = addExportFlags(cmd, runExports...)
	o.rateUnit = addRateUnitFlag(cmd)
}

// plan checks the outputs asked for before the run starts.
func (o *runOutputFlags) plan(cmd *cobra.Command) error {
	outs, err := o.exports.plan(cmd, runStdout...)
	if err != nil {
		return err
	}
	o.outs = outs
	return setRateUnit(*o.rateUnit, cmd.Flags().Changed("rate-unit"))
}

// live is what writes to stdout as the run goes (nil: nothing does).
// perSample (-i given): an --intervals line per sample, else per second.
func (o *runOutputFlags) live(a *app, cfg model.Config, perSample bool) liveOutput {
	switch {
	case o.jsonStream:
		return &jsonStream{w: a.stdout}
	case o.intervals:
		return newIntervalPrinter(a.stdout, cfg.Interval, perSample)
	}
	return nil
}

// liveOutput sees every update of a run as it comes.
type liveOutput interface{ update(model.Update) }

// writeRun writes a finished run to every destination.
func (a *app) writeRun(rep model.Report, o *runOutputFlags, live liveOutput, name string) error {
	return a.writeOutputs(o.outs, func(format string, w io.Writer) error {
		if js, ok := live.(*jsonStream); ok && format == fmtJSONStream {
			return js.summary(rep)
		}
		if ip, ok := live.(*intervalPrinter); ok && ip.began && w == a.stdout {
			fmt.Fprintln(w) // the summary after a blank line, as iperf3's
		}
		return writeRunAs(format, w, rep, name)
	})
}

// writeRunAs writes a run in one format; name titles the markdown.
func writeRunAs(format string, w io.Writer, rep model.Report, name string) error {
	return formatWriters{
		fmtCSV:      func(w io.Writer) error { return model.WriteRunCSV(w, rep) },
		fmtMarkdown: func(w io.Writer) error { return report.RunMarkdown(w, name, rep) },
		fmtText:     printed(func(w io.Writer) { report.Summary(w, rep) }),
	}.write("run", format, w, rep)
}
