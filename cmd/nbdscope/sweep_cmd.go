package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newSweepProgress(a.stderr, isTerminal(a.stderr), time.Now)
	rows, err := engine.Sweep(ctx, cfg, spec, engine.Options{}, prog.update)
	prog.finish()
	rep := engine.SweepReport{Version: engine.SweepVersion, Nbdscope: engine.Version, Time: time.Now().UTC(),
		Spec: spec, Config: cfg, Rows: rows, Optimum: engine.Optimum(rows)}
	var outcome error
	switch {
	case err != nil && ctx.Err() != nil:
		rep.Partial, rep.PartialReason = true, fmt.Sprintf("interrupted after %d of %d sizes", len(rows), len(spec.Sizes))
		outcome = exitError{exitInterrupted, fmt.Errorf("sweep interrupted: %w", err)}
	case err != nil:
		rep.Partial, rep.PartialReason = true, err.Error()
		outcome = err
	}
	if rep.Partial && len(rows) == 0 {
		return outcome // nothing measured: only the error
	}
	var werr error
	switch {
	case f.asJSON:
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		werr = enc.Encode(rep)
	case f.asCSV:
		werr = writeSweepCSV(a.stdout, rep)
	case f.asMD:
		writeSweepMarkdown(a.stdout, rep)
	default:
		writeSweepText(a.stdout, rep, terminalWidth(a.stdout))
	}
	if werr != nil {
		return werr
	}
	return outcome
}
