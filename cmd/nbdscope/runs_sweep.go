package main

import (
	"fmt"
	"io"

	"nbdscope/model"
	"nbdscope/presets"
)

// A saved sweep (sweep --save) is a run whose report carries the sweep:
// runs show, export and compare print it with the sweep's own writers.

// exportSweepRun writes a saved sweep as markdown or CSV; JSON (the run
// file itself) and SVG (a bar per buffer size, plot.SweepSVG) are
// presets.ExportRun's.
func exportSweepRun(rf presets.RunFile, format string, w io.Writer) error {
	rep := *rf.Report.Sweep
	switch format {
	case presets.FormatMarkdown, "markdown":
		writeSweepMarkdown(w, rep)
		return nil
	case presets.FormatCSV:
		return writeSweepCSV(w, rep)
	case presets.FormatJSON, presets.FormatSVG:
		return presets.ExportRun(rf, format, w)
	}
	return usageErrorf("runs export: %q is a sweep: --format md, csv, json or svg", rf.Name)
}

// compareSweeps puts two saved sweeps side by side, size by size: time
// and GiB/s of each and the second's speed-up over the first.
func compareSweeps(w io.Writer, first, second presets.RunFile) error {
	a, b := first.Report.Sweep, second.Report.Sweep
	if a == nil || b == nil {
		return usageErrorf("runs compare: %q and %q: a sweep compares only with a sweep", first.Name, second.Name)
	}
	fmt.Fprintf(w, "| buffer size | %s time | %s time | %s GiB/s | %s GiB/s | speed-up |\n", first.Name, second.Name, first.Name, second.Name)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	byBuf := map[string]model.SweepRow{}
	for _, r := range b.Rows {
		byBuf[r.Buffer] = r
	}
	for _, r := range a.Rows {
		o, ok := byBuf[r.Buffer]
		if !ok {
			fmt.Fprintf(w, "| %s | %.3fs | n/a | %s | n/a | n/a |\n", r.Buffer, r.Seconds, gibps(r.ThroughputBps))
			continue
		}
		fmt.Fprintf(w, "| %s | %.3fs | %.3fs | %s | %s | %s |\n", r.Buffer, r.Seconds, o.Seconds,
			gibps(r.ThroughputBps), gibps(o.ThroughputBps), ratio(r.ThroughputBps, o.ThroughputBps))
	}
	fmt.Fprintf(w, "\n%s: %s\n%s: %s\n", first.Name, optimumLine(a.Optimum), second.Name, optimumLine(b.Optimum))
	return nil
}
