package main

import (
	"cmp"
	"context"
	"fmt"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/phrase"
)

const runLong = `A headless run of the pair: a summary table per side, or with --json/--csv
every sample and event too. A run cut short by a crashed process or ctrl+c
is still printed (and saved), marked partial with the reason; the exit
status says so (1 a side crashed, 130 interrupted).

One output goes to stdout (the table, -J/--json, --csv, --markdown,
--intervals or --json-stream) and any number to files (--export-json,
--export-csv, --export-markdown FILE; - is stdout), checked before the
load starts. --intervals prints iperf3's line per side per interval as the
run goes, then the table; it is not the default on a pipe, because what
run prints to stdout is the same wherever stdout goes, so scripts reading
the table keep working and a command tried on a terminal prints the same
in a log. --json-stream writes a JSON object per line as it happens, the
summary last (partial on ctrl+c). The short flags are iperf3's: -t
seconds, -P connections, -l request size, -w send buffer, -i interval,
-J JSON.`

const runExample = `  nbdscope run --sndbuf-b 2m --at 5s:b.sndbuf=64k --duration 10s --json
  nbdscope run -t 3 -P 2 -w 2m --intervals --export-json run.json
  nbdscope run --preset macos-gap --save mac-vs-linux`

type runFlags struct {
	asJSON, asCSV, force bool
	save                 string
	out                  runOutputFlags // the other outputs (run_outputs.go)
}

func newRunCmd(a *app) *cobra.Command {
	var f runFlags
	cmd, lf := newMeasureCmd(a, "run [flags]", "A headless run with a summary table (--json, --csv, --save)", runLong, runExample, true)
	fs := cmd.Flags()
	fs.BoolVarP(&f.asJSON, "json", "J", false, "print the whole run as one JSON object (version 1, see docs/cli.md)")
	fs.BoolVar(&f.asCSV, "csv", false, "print the samples as CSV")
	fs.StringVar(&f.save, "save", "", "save the run under `NAME` (see 'nbdscope runs')")
	fs.BoolVar(&f.force, "force", false, "with --save: replace an existing run of that name")
	addRunOutputFlags(cmd, &f.out)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := f.out.plan(cmd); err != nil {
			return err
		}
		return a.runRun(lf, f)
	}
	return cmd
}

// startPair starts the engine; tests replace it.
var startPair = func(ctx context.Context, cfg model.Config) (*engine.Pair, error) {
	return engine.Start(ctx, cfg)
}

func (a *app) runRun(lf *loadFlags, f runFlags) error {
	cfg, err := lf.config(a)
	if err != nil {
		return err
	}
	if cfg.Duration <= 0 {
		return usageErrorf("run: --duration must be positive")
	}
	if err := changesInRun(cfg); err != nil {
		return err
	}
	if f.save != "" {
		// Refuse a taken name or a store that cannot be written before
		// the run, not after it.
		if err := a.checkRunName(f.save, f.force); err != nil {
			return fmt.Errorf("--save: %w", err)
		}
	}
	live := f.out.live(a, cfg)
	rep, interrupted, err := runPair(cfg, stdoutFormat(f.out.outs) == fmtText && live == nil, live)
	if err != nil {
		return err
	}
	rep.Preset = lf.preset
	// A partial run is still printed and saved (marked so): what was
	// measured is not thrown away; the exit status tells it was partial.
	// It is printed first, so that a save that fails loses nothing, and
	// saved even when printing fails.
	perr := a.writeRun(rep, &f.out, live, f.save) // an unsaved run titles its markdown "(unsaved)"
	outcome := runOutcome(rep, interrupted)
	if f.save != "" {
		if err := a.saveRun(f.save, rep, f.force); err != nil {
			return saveOutcome(err, cmp.Or(perr, outcome))
		}
		fmt.Fprintf(a.stderr, "nbdscope: run saved as %q\n", f.save)
	}
	return cmp.Or(perr, outcome)
}

// changesInRun refuses a scripted change that would never happen: one at
// or after the end of the run (it exited 0 without a word).
func changesInRun(cfg model.Config) error {
	for _, ch := range cfg.Script {
		switch {
		case ch.At > cfg.Duration:
			return usageErrorf("run: --at %v is after the end of the run (--duration %v): %v would never happen", ch.At.D(), cfg.Duration.D(), ch)
		case ch.At == cfg.Duration:
			return usageErrorf("run: --at %v is the end of the run (--duration %v): %v would never take effect", ch.At.D(), cfg.Duration.D(), ch)
		}
	}
	return nil
}

// runOutcome is the error (and so the exit status) a finished run stands
// for: nil when it is complete, exitInterrupted when a signal cut it short,
// exitFailure when a side crashed.
func runOutcome(rep model.Report, interrupted bool) error {
	if !rep.Partial {
		return nil
	}
	code := exitFailure
	if interrupted && len(rep.Crashes) == 0 {
		code = exitInterrupted
	}
	return exitError{code, fmt.Errorf("the run is partial: %s", rep.PartialReason)}
}

// runPair runs cfg to its end, or until a signal interrupts it, and returns
// the report. On a terminal it shows a progress line on stderr; live, if
// set, sees every update as it comes (--intervals, --json-stream).
func runPair(cfg model.Config, progress bool, live liveOutput) (rep model.Report, interrupted bool, err error) {
	ctx, stop := signalContext()
	defer stop()
	p, err := startPair(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return model.Report{}, true, exitError{exitInterrupted, fmt.Errorf("interrupted while starting: %w", err)}
		}
		return model.Report{}, false, err
	}
	tty := progress && isatty.IsTerminal(os.Stderr.Fd())
	if s, ok := live.(*jsonStream); ok {
		s.start(cfg, p)
	}
	var last [2]model.Sample
	for u := range p.Updates() {
		if live != nil {
			live.update(u)
		}
		switch {
		case u.Sample != nil:
			if i := u.Sample.Side.Index(); i >= 0 && u.Sample.Active {
				last[i] = *u.Sample
			}
			if tty {
				fmt.Fprintf(os.Stderr, "\r\033[K%5.1fs/%v  A %s  B %s", u.Sample.T, cfg.Duration.D(),
					last[0].ThroughputBps.Rate(), last[1].ThroughputBps.Rate())
			}
		case u.Crash != nil:
			fmt.Fprintf(os.Stderr, "\nnbdscope: %s\n", u.Crash.Text())
		case u.Warning != nil:
			w := u.Warning
			fmt.Fprintf(os.Stderr, "\nnbdscope: warning: %s\n", phrase.WarningLong(*w))
			if fix := phrase.WarningFix(*w); fix != "" {
				fmt.Fprintf(os.Stderr, "nbdscope:   fix: %s\n", fix)
			}
		case u.Done != nil:
			interrupted = u.Done.Err != nil && ctx.Err() != nil
		}
	}
	if tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	rep = p.Report()
	p.Stop()
	return rep, interrupted, nil
}
