package report

import (
	"fmt"
	"io"
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/seed"
	"nbdscope/units"
)

// The series' own rows beside ours: an exec sweep of a command the seed
// measured (the built-in presets qemu-img-read, qemu-nbd-read,
// qemu-img-write, nbdcopy-blkhash, blksum-exec name its case) prints, for
// each buffer we swept, the published time, user and system seconds and
// the ratio to the default on Linux and on macOS, then one line setting
// the two optima side by side. The rows are matched by the buffer
// requested: "default" is each OS's own (208 KiB on Linux, 8 KiB on macOS).

// seedTables are the series' tables of the sweep's case, Linux first.
func seedTables(rep model.SweepReport) []seed.Table {
	x := rep.Spec.Exec
	if x == nil || x.Seed == "" {
		return nil
	}
	var out []seed.Table
	for _, os := range []seed.OS{seed.Linux, seed.MacOS} {
		if t, ok := seed.Lookup(os, x.Seed); ok {
			out = append(out, t)
		}
	}
	return out
}

// seedRows prints the table of ours beside the series'.
func seedRows(w io.Writer, rep model.SweepReport) {
	ts := seedTables(rep)
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nBeside ours, the rows %s published for %q (%s). Its machines are not this one: compare the ratios to the default, not the times.\n",
		seed.Series, rep.Spec.Exec.Seed, sourcesOf(ts))
	if rep.Spec.Exec.Note != "" {
		fmt.Fprintf(w, "Ours ran a fallback (%s): the series' rows are of the command it names.\n", rep.Spec.Exec.Note)
	}
	head := "| buffer size | ours: time | ours: vs default |"
	rule := "|---|---:|---:|"
	for _, t := range ts {
		head += fmt.Sprintf(" %s: time | user | system | vs default |", t.Platform)
		rule += "---:|---:|---:|---:|"
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	def := defaultSeconds(rep.Rows)
	for _, r := range rep.Rows {
		cells := []string{r.Buffer, fmt.Sprintf("%.3fs", r.Seconds), timesFaster(def, r.Seconds)}
		for _, t := range ts {
			cells = append(cells, seedCells(t, r.Buffer)...)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// sourcesOf names each table's platform and patch.
func sourcesOf(ts []seed.Table) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.OS.String()+": "+t.Patch())
	}
	return strings.Join(s, "; ")
}

// defaultSeconds is our default row's time, 0 when the default was not swept.
func defaultSeconds(rows []model.SweepRow) float64 {
	for _, r := range rows {
		if r.Buffer == model.BufDefaultName {
			return r.Seconds
		}
	}
	return 0
}

// timesFaster is "2.17x": the default's time over this one's.
func timesFaster(def, secs float64) string {
	if def <= 0 || secs <= 0 {
		return "—"
	}
	return units.FormatRatio(def / secs)
}

// seedCells are one table's time, user, system and ratio at a buffer, or
// dashes where the series did not measure that size.
func seedCells(t seed.Table, buffer string) []string {
	r, ok := seedRowAt(t, buffer)
	if !ok {
		return []string{"—", "—", "—", "—"}
	}
	vs, _ := t.VsDefault(r)
	return []string{fmt.Sprintf("%.3fs", r.TimeS), fmt.Sprintf("%.3fs", r.UserS), fmt.Sprintf("%.3fs", r.SysS), units.FormatRatio(vs)}
}

// seedRowAt is the series' row for one of our buffer names.
func seedRowAt(t seed.Table, buffer string) (seed.Row, bool) {
	if buffer == model.BufDefaultName {
		return t.Default()
	}
	n, err := units.ParseSize(buffer)
	if err != nil {
		return seed.Row{}, false
	}
	return t.At(int(n))
}

// seedOptimumLine sets the series' fastest row beside ours: "the series:
// 2m, 2.28x the default on Linux (…); 2m, 12.6x on macOS", with ours
// from the sweep's own optimum verdict.
func seedOptimumLine(rep model.SweepReport) string {
	ts := seedTables(rep)
	if len(ts) == 0 {
		return ""
	}
	var parts []string
	for _, t := range ts {
		f := t.Fastest()
		vs, _ := t.VsDefault(f)
		parts = append(parts, fmt.Sprintf("%s %s at %s", t.OS, units.FormatRatio(vs), seedBufName(f)))
	}
	// Ours is the sweep's own verdict, worded as runs list words it: an
	// optimum only where it is told apart beyond noise.
	ours := phrase.OptimumShort(rep.Optimum)
	return fmt.Sprintf("beside the series' fastest: ours %s; the series (one time per size, times faster than its default) %s.", ours, strings.Join(parts, ", "))
}

// seedBufName prints a seed row's buffer as ours are printed ("2m").
func seedBufName(r seed.Row) string {
	if r.Bytes == 0 {
		return seed.Default
	}
	return units.FormatSize(int64(r.Bytes))
}
