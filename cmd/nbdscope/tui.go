package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/pprof"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/ui"
	"nbdscope/units"
)

const tuiLong = `nbdscope — see the NBD data path: throughput, syscalls per 2 MiB, CPU.

Without a command, nbdscope is the interactive explorer: it runs a pair of
NBD sides (A and B) and charts throughput, syscalls per 2 MiB and CPU time
live while you change the send buffer, connections, request size… Press ?
in it for every key. The commands below run the same pair headless, sweep
buffer sizes, serve an export to real NBD clients, and manage presets and
saved runs.`

const tuiExample = `  nbdscope --preset macos-gap
  nbdscope --sndbuf-a default --sndbuf-b 2m --connections 4
  nbdscope run --preset macos-gap --duration 10s --json
  nbdscope sweep --preset sweep --repeat 1 --bytes 1g`

// startEngine starts the pair the explorer drives; tests replace it.
var startEngine = func(ctx context.Context, cfg model.Config) (engine.Controller, error) {
	p, err := engine.Start(ctx, cfg)
	if err != nil {
		return nil, err // not a typed nil *Pair in the interface
	}
	return p, nil
}

// newTUICmd is the root command: the explorer.
func newTUICmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "nbdscope",
		Short:   "See the NBD data path: throughput, syscalls per 2 MiB, CPU",
		Long:    tuiLong,
		Example: tuiExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q", args[0])
			}
			return nil
		},
	}
	setExits(cmd, exitsExplorer)
	lf := addLoadFlags(a, cmd, false)
	window := cmd.Flags().Duration("window", ui.DefaultWindow, "`SPAN` of time the charts show (5s…1h)")
	unit := addRateUnitFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var rs *units.RateScale
		if *unit != "" || cmd.Flags().Changed("rate-unit") {
			u, err := units.ParseRateScale(*unit)
			if err != nil {
				return usageErrorf("--rate-unit: %v", err)
			}
			rs = &u
		}
		return a.runTUI(lf, *window, rs)
	}
	return cmd
}

func (a *app) runTUI(lf *loadFlags, window time.Duration, rateUnit *units.RateScale) error {
	if window < 5*time.Second || window > time.Hour {
		return usageErrorf("--window %v: want 5s to 1h", window)
	}
	cfg, err := lf.config(a)
	if err != nil {
		return err
	}
	if !isTerminal(a.stdout) {
		return usageErrorf("the explorer needs a terminal; 'nbdscope run' is the headless run")
	}
	// The header names the preset, marked modified (linux-gap*) when the
	// flags changed it. Without --preset it is the built-in default, which
	// is the linux-gap preset: say so rather than "default", which the
	// preset picker (p) does not list.
	base, err := a.livePresetConfig(lf.preset)
	if err != nil {
		return err
	}
	opts := ui.Options{PresetName: lf.preset, PresetConfig: &base, Window: window, RateUnit: rateUnit}
	if opts.PresetName == "" {
		opts.PresetName = "default"
		if lg, err := a.presetConfig("linux-gap"); err == nil && lg.Sides == base.Sides && lg.Mode == base.Mode {
			opts.PresetName = "linux-gap"
		}
	}
	a.tuiPresets(&opts)

	// NBDSCOPE_CPUPROFILE=FILE writes a CPU profile of the explorer's own
	// process (not its children) to FILE (bench/ui-cpu.sh measures it).
	if path := os.Getenv("NBDSCOPE_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("NBDSCOPE_CPUPROFILE: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("NBDSCOPE_CPUPROFILE: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctrl, err := startEngine(ctx, cfg)
	if err != nil {
		return err
	}
	a.saveRunsToo(&opts, ctrl)
	// ui.Run stops the pair however the explorer ends. SIGINT from
	// outside (bubbletea's ErrInterrupted) is ctrl+c, which quits like q:
	// exit 0, as SIGTERM does.
	if err := ui.Run(ctrl, opts); !errors.Is(err, tea.ErrInterrupted) {
		return err
	}
	return nil
}

// saveRunsToo makes the explorer's s key keep the run as well as the
// preset: under the same name, the configuration (a preset to start from
// again) and the recorded samples, events and summary (a run for 'nbdscope
// runs list|show|export|compare').
func (a *app) saveRunsToo(o *ui.Options, ctrl engine.Controller) {
	rp, ok := ctrl.(interface{ Report() model.Report })
	if !ok {
		return
	}
	wrap := func(save ui.SaveFunc, force bool) ui.SaveFunc {
		if save == nil {
			return nil
		}
		return func(name string, cfg model.Config, from string) error {
			if err := a.checkRunName(name, force); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%w: %w", ui.ErrPresetExists, err)
				}
				return err
			}
			if err := save(name, cfg, from); err != nil {
				return err
			}
			rep := rp.Report()
			rep.Preset = from
			return a.saveRun(name, rep, force)
		}
	}
	o.SavePreset = wrap(o.SavePreset, false)
	o.OverwritePreset = wrap(o.OverwritePreset, true)
	if st, err := a.openStore(); err == nil && o.SavePreset != nil {
		o.RunPath = st.RunPath // the help and the save message name the file
	}
}
