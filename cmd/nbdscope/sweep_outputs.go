package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/report"
)

// sweepExports are the formats sweep writes to files (--export-FORMAT).
var sweepExports = []string{fmtJSON, fmtCSV, fmtMarkdown, fmtHyperfine}

// sweepStdout are the flags that send one of them to stdout instead of the
// table.
var sweepStdout = []stdoutChoice{{"json", fmtJSON}, {"csv", fmtCSV}, {"markdown", fmtMarkdown}}

// planSweepOutputs checks the outputs asked for before the sweep runs.
func planSweepOutputs(cmd *cobra.Command, ex *exportFlags) ([]destination, error) {
	return ex.plan(cmd, sweepStdout...)
}

// writeSweepAs writes a sweep in one format; width is that of stdout's
// terminal (the bars of the text table).
func writeSweepAs(format string, w io.Writer, rep model.SweepReport, width int) error {
	return formatWriters{
		fmtCSV:       func(w io.Writer) error { return report.SweepCSV(w, rep) },
		fmtMarkdown:  printed(func(w io.Writer) { report.SweepMarkdown(w, rep) }),
		fmtHyperfine: func(w io.Writer) error { return writeSweepHyperfine(w, rep) },
		fmtText:      printed(func(w io.Writer) { report.SweepText(w, rep, width) }),
	}.write("sweep", format, w, rep)
}

// formatWriters are one report's writers by output format, but for JSON,
// which every report has and is the report itself (write adds it).
type formatWriters map[string]func(io.Writer) error

// write writes rep in format, or says that what (the command) has no such
// output format.
func (fw formatWriters) write(what, format string, w io.Writer, rep any) error {
	if format == fmtJSON {
		return writeJSON(w, rep)
	}
	if write, ok := fw[format]; ok {
		return write(w)
	}
	return fmt.Errorf("%s: no output format %q", what, format)
}

// printed makes a writer of one that prints with fmt.Fprintf all along and
// so never sees an error: writeErr returns the first one the underlying
// writer returned.
func printed(print func(io.Writer)) func(io.Writer) error {
	return func(w io.Writer) error { return writeErr(w, print) }
}

// writeErr runs a writer that ignores errors (fmt.Fprintf all along) and
// returns the first error the underlying writer returned, so a full disk
// is not reported as written.
func writeErr(w io.Writer, write func(io.Writer)) error {
	ew := &errWriter{w: w}
	write(ew)
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// writeJSON writes v as indented JSON (a run's or a sweep's --json).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
