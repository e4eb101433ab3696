package main

import (
	"fmt"
	"io"
	"strings"

	"nbdscope/model"
	"nbdscope/plot"
	"nbdscope/presets"
	"nbdscope/report"
)

// Export formats of a saved run (runs export --format).
const (
	formatMarkdown = "md"
	formatCSV      = "csv"
	formatJSON     = "json"
	formatSVG      = "svg"
)

// exportFormats lists the formats exportRun writes.
var exportFormats = []string{formatMarkdown, formatCSV, formatJSON, formatSVG}

// exportRun writes a saved run for people and tools, each format from the
// package that owns it:
//
//   - md: the summary, segments, setup and events (report.RunMarkdown);
//     of a saved sweep (sweep --save), the sweep's table
//     (report.SweepMarkdown).
//   - csv: one row per sample, with a header, in the model's one CSV
//     layout (the same as run --csv); of a sweep, a row per size
//     (report.SweepCSV).
//   - json: the run file itself, as the store keeps it.
//   - svg: the charts of both sides over time, changes labelled (plot.SVG);
//     of a saved sweep, a bar per buffer size (plot.SweepSVG).
func exportRun(rf presets.RunFile, format string, w io.Writer) error {
	sw := rf.Report.Sweep
	switch strings.ToLower(format) {
	case formatMarkdown, "markdown":
		if sw != nil {
			report.SweepMarkdown(w, *sw)
			return nil
		}
		return report.RunMarkdown(w, rf.Name, rf.Report)
	case formatCSV:
		if sw != nil {
			return report.SweepCSV(w, *sw)
		}
		return model.WriteRunCSV(w, rf.Report.WithStamps())
	case formatJSON:
		data, err := rf.JSON()
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case formatSVG:
		doc := plot.SVG(rf.Name, rf.Report)
		if sw != nil {
			doc = plot.SweepSVG(rf.Name, rf.Report) // a bar per size, not series over time
		}
		_, err := io.WriteString(w, doc)
		return err
	}
	return fmt.Errorf("export format %q: want %s", format, strings.Join(exportFormats, ", "))
}

// compareSweeps puts two saved sweeps side by side, size by size
// (report.CompareSweeps); a run does not compare with a sweep.
func compareSweeps(w io.Writer, first, second presets.RunFile) error {
	if first.Report.Sweep == nil || second.Report.Sweep == nil {
		return usageErrorf("runs compare: %q and %q: a sweep compares only with a sweep", first.Name, second.Name)
	}
	report.CompareSweeps(w, reportRun(first), reportRun(second))
	return nil
}

func reportRun(rf presets.RunFile) report.Run { return report.Run{Name: rf.Name, Report: rf.Report} }
