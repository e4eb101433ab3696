package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/guptarohit/asciigraph"
	"github.com/mattn/go-isatty"

	"nbdscope/engine"
	"nbdscope/units"
)

func init() {
	extraCommands["sweep"] = cmdSweep
}

const sweepUsage = `Usage: nbdscope sweep [flags]

For each send buffer size, move a fixed amount of data on one side (after a
warm-up; median of repeats) and print the table in the shape people publish:

  nbdscope sweep --sndbuf default,64k,128k,256k,512k,1m,2m,4m --bytes 4g --repeat 3

Flags:
`

// sweepSpecFor finds a preset's sweep definition; replaced when presets are wired.
var sweepSpecFor = func(preset string) (*engine.SweepSpec, error) { return nil, nil }

func cmdSweep(args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, sweepUsage); fs.PrintDefaults() }
	lf := newLoadFlags(fs, false)
	// --sndbuf here is the list of sizes to sweep: take it over.
	sizes := strings.Join(engine.DefaultSweepSizes, ",")
	fs.Lookup("sndbuf").Usage = "comma-separated server send buffer sizes to sweep"
	bytesFlag := fs.String("bytes", "4g", "payload to move per measurement")
	repeat := fs.Int("repeat", 3, "measurements per size (the median is shown)")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV")
	asMD := fs.Bool("markdown", false, "print a markdown table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if v := lf.values["sndbuf"]; v[0] != "" {
		sizes = v[0]
		v[0] = ""
	}
	n := 0
	for _, b := range []bool{*asJSON, *asCSV, *asMD} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usageErrorf("sweep: choose one of --json, --csv, --markdown")
	}
	cfg, err := lf.config()
	if err != nil {
		return err
	}
	spec := engine.SweepSpec{Repeat: *repeat}
	if ps, err := sweepSpecFor(lf.preset); err != nil {
		return err
	} else if ps != nil {
		spec = *ps
	}
	if fs.Lookup("repeat").Value.String() != "3" || spec.Repeat == 0 {
		spec.Repeat = *repeat
	}
	if spec.Bytes == 0 || *bytesFlag != "4g" {
		if spec.Bytes, err = units.ParseSize(*bytesFlag); err != nil {
			return usageErrorf("sweep: --bytes: %v", err)
		}
	}
	if len(spec.Sizes) == 0 || sizes != strings.Join(engine.DefaultSweepSizes, ",") {
		spec.Sizes = nil
		for _, s := range strings.Split(sizes, ",") {
			b, err := engine.ParseBuf(s)
			if err != nil {
				return usageErrorf("sweep: --sndbuf: %v", err)
			}
			spec.Sizes = append(spec.Sizes, b)
		}
	}
	if spec.Repeat < 1 || spec.Repeat > 100 {
		return usageErrorf("sweep: --repeat must be 1…100")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tty := isatty.IsTerminal(os.Stderr.Fd())
	rows, err := engine.Sweep(ctx, cfg, spec, engine.Options{}, func(size string, rep int) {
		if tty {
			fmt.Fprintf(os.Stderr, "\r\033[Ksweep: %s, repeat %d/%d", size, rep, spec.Repeat)
		}
	})
	if tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	if err != nil && ctx.Err() != nil {
		return exitError{exitInterrupted, fmt.Errorf("sweep interrupted: %w", err)}
	}
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"version": 1, "spec": spec, "config": cfg, "rows": rows})
	case *asCSV:
		cw := csv.NewWriter(os.Stdout)
		cw.Write([]string{"buffer", "effective", "seconds", "user_s", "sys_s", "throughput_bps", "recv_calls_per_2mib"})
		for _, r := range rows {
			cw.Write([]string{r.Buffer, strconv.Itoa(r.Effective), ff(r.Seconds), ff(r.UserS), ff(r.SysS), fig(r.ThroughputBps, 0), fig(r.RecvPer2MiB, 2)})
		}
		cw.Flush()
		return cw.Error()
	}
	writeSweepMarkdown(os.Stdout, spec, rows)
	if !*asMD && isatty.IsTerminal(os.Stdout.Fd()) && len(rows) > 1 {
		var ys []float64
		for _, r := range rows {
			ys = append(ys, float64(r.ThroughputBps)/engine.GiB)
		}
		fmt.Println()
		fmt.Println(asciigraph.Plot(ys, asciigraph.Height(10), asciigraph.Caption("GiB/s by buffer size: "+sizes), asciigraph.Precision(2)))
	}
	return nil
}

func ff(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func writeSweepMarkdown(w io.Writer, spec engine.SweepSpec, rows []engine.SweepRow) {
	where := ""
	if len(rows) > 0 && rows[0].Placement.Setting != "" {
		pl := rows[0].Placement
		where = fmt.Sprintf("; placement %s (client on cpu %s, server on cpu %s)", pl.Setting, pl.LoadCPUs, pl.ServerCPUs)
	}
	fmt.Fprintf(w, "Moving %s per measurement, median of %d%s.\n\n", units.FormatBytes(float64(spec.Bytes)), spec.Repeat, where)
	fmt.Fprintln(w, "| buffer size | time | user | system | GiB/s | syscalls per 2 MiB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		buf := r.Buffer
		if r.Effective > 0 {
			buf += " (" + units.FormatSize(int64(r.Effective)) + ")"
		}
		gib := "n/a"
		if r.ThroughputBps.Known() {
			gib = fmt.Sprintf("%.2f", float64(r.ThroughputBps)/engine.GiB)
		}
		fmt.Fprintf(w, "| %s | %.3fs | %.3fs | %.3fs | %s | %s |\n", buf, r.Seconds, r.UserS, r.SysS, gib, fig(r.RecvPer2MiB, 1))
	}
}
