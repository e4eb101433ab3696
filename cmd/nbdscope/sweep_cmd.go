package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/guptarohit/asciigraph"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"nbdscope/engine"
	"nbdscope/units"
)

const sweepLong = `For each send buffer size, move a fixed amount of data on one side (after a
warm-up; median of repeats) and print the table in the shape people publish,
a bar per size and the optimum. Flags set on the command line win over the
preset's sweep.`

const sweepExample = `  nbdscope sweep --sndbuf default,64k,128k,256k,512k,1m,2m,4m --bytes 4g --repeat 3
  nbdscope sweep --preset sweep --repeat 1 --bytes 1g --markdown`

type sweepFlags struct {
	sizes, bytes        string
	repeat              int
	asJSON, asCSV, asMD bool
}

func newSweepCmd(a *app) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:     "sweep [flags]",
		Short:   "A send-buffer sweep: table, bars and the optimum (--json, --csv, --markdown)",
		Long:    sweepLong,
		Example: sweepExample,
		Args:    noArgs,
	}
	// --sndbuf here is the list of sizes to sweep, not a per-side setting.
	lf := addLoadFlags(a, cmd, false, engine.SetSndBuf)
	fs := cmd.Flags()
	fs.StringVar(&f.sizes, "sndbuf", strings.Join(engine.DefaultSweepSizes, ","), "comma-separated server send buffer `SIZES` to sweep")
	cmd.RegisterFlagCompletionFunc("sndbuf", completeBufList)
	fs.StringVar(&f.bytes, "bytes", "4g", "payload `SIZE` to move per measurement")
	fs.IntVar(&f.repeat, "repeat", 3, "measurements per size, `N` (the median is shown)")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (version 2, see the README)")
	fs.BoolVar(&f.asCSV, "csv", false, "print CSV")
	fs.BoolVar(&f.asMD, "markdown", false, "print a markdown table")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := exclusive(cmd, "json", "csv", "markdown"); err != nil {
			return err
		}
		cfg, err := lf.config(a)
		if err != nil {
			return err
		}
		base, err := a.sweepSpec(lf.preset)
		if err != nil {
			return err
		}
		spec, err := f.spec(cmd.Flags(), base)
		if err != nil {
			return err
		}
		return a.sweep(cfg, spec, f)
	}
	return cmd
}

// spec is the sweep to run: the preset's sweep (or the defaults), with
// every flag the user set winning over it.
func (f *sweepFlags) spec(fs *pflag.FlagSet, preset *engine.SweepSpec) (engine.SweepSpec, error) {
	spec := engine.SweepSpec{}
	if preset != nil {
		spec = *preset
		spec.Sizes = append([]engine.Buf(nil), preset.Sizes...)
	}
	if fs.Changed("repeat") || spec.Repeat == 0 {
		spec.Repeat = f.repeat
	}
	if fs.Changed("bytes") || spec.Bytes == 0 {
		n, err := units.ParseSize(f.bytes)
		if err != nil || n <= 0 {
			return spec, usageErrorf("sweep: --bytes %q: want a positive size (1g, 512m)", f.bytes)
		}
		spec.Bytes = n
	}
	if fs.Changed("sndbuf") || len(spec.Sizes) == 0 {
		spec.Sizes = nil
		for _, s := range strings.Split(f.sizes, ",") {
			b, err := engine.ParseBuf(strings.TrimSpace(s))
			if err != nil {
				return spec, usageErrorf("sweep: --sndbuf: %v", err)
			}
			spec.Sizes = append(spec.Sizes, b)
		}
	}
	if spec.Repeat < 1 || spec.Repeat > 100 {
		return spec, usageErrorf("sweep: --repeat %d: want 1…100", spec.Repeat)
	}
	return spec, nil
}

func (a *app) sweep(cfg engine.Config, spec engine.SweepSpec, f sweepFlags) error {
	asJSON, asCSV, asMD := &f.asJSON, &f.asCSV, &f.asMD
	sizes := f.sizes
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tty := isTerminal(a.stderr)
	rows, err := engine.Sweep(ctx, cfg, spec, engine.Options{}, func(size string, rep int) {
		if tty {
			fmt.Fprintf(a.stderr, "\r\033[Ksweep: %s, repeat %d/%d", size, rep, spec.Repeat)
		}
	})
	if tty {
		fmt.Fprint(a.stderr, "\r\033[K")
	}
	if err != nil && ctx.Err() != nil {
		return exitError{exitInterrupted, fmt.Errorf("sweep interrupted: %w", err)}
	}
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"version": 1, "spec": spec, "config": cfg, "rows": rows})
	case *asCSV:
		cw := csv.NewWriter(a.stdout)
		cw.Write([]string{"buffer", "effective", "seconds", "user_s", "sys_s", "throughput_bps", "recv_calls_per_2mib"})
		for _, r := range rows {
			cw.Write([]string{r.Buffer, strconv.Itoa(r.Effective), ff(r.Seconds), ff(r.UserS), ff(r.SysS), fig(r.ThroughputBps, 0), fig(r.RecvPer2MiB, 2)})
		}
		cw.Flush()
		return cw.Error()
	}
	writeSweepMarkdown(a.stdout, spec, rows)
	if !*asMD && isTerminal(a.stdout) && len(rows) > 1 {
		var ys []float64
		for _, r := range rows {
			ys = append(ys, float64(r.ThroughputBps)/engine.GiB)
		}
		fmt.Fprintln(a.stdout)
		fmt.Fprintln(a.stdout, asciigraph.Plot(ys, asciigraph.Height(10), asciigraph.Caption("GiB/s by buffer size: "+sizes), asciigraph.Precision(2)))
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
