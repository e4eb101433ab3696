package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"nbdscope/clientrun"
	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/platform"
	"nbdscope/shellword"
	"nbdscope/sweep"
	"nbdscope/units"
)

const sweepLong = `For each send buffer size, move a fixed amount of data on one side (after a
warm-up; median of repeats) and print the table in the shape people publish,
a bar per size and the optimum, with what set the pace there: the process
that used all of the cores it was held to (a bigger buffer removes waiting,
not work), or neither. Flags set on the command line win over the
preset's sweep. The measurements go in rounds, one of each size in turn,
--repeat times, so a machine's slow stretch meets every size alike.

A measurement sends --bytes in whole requests (rounded up to the request
size; at least one round, connections × in flight × request size, or the
sweep is refused) and no more, after an unmeasured warm-up of up to
256 MiB; its time is the wall time from its first request to its last
reply, and GiB/s is its bytes over that time.

With --exec 'CMD' the load is a real client instead: for each size a fresh
nbdscope server (the null backend, reads filled with 0xff; --backend to
change it) listens on a unix socket of its own with that send buffer, and
CMD runs against it --warmup times unmeasured, then --repeat times. {uri}
(the NBD URI), {socket} (the socket's path) and {size} (the export's size
in bytes, --bytes) are replaced in CMD, which runs without a shell unless
--shell is given. Each run's time is wall time; user and system are the
CPU of the client and every process it waited for (wait4, as time(1));
the server's send calls and EAGAIN per 2 MiB, CPU and bytes sent are the
server's own counts. A failing command stops the sweep with its exit
status and the end of its stderr. The client (with all it starts) and the
server are held to cores as --placement says: by default one core each.
Every size's warm-ups come before the first round.
Presets: qemu-img-read, qemu-img-write, nbdcopy-blkhash, and blksum-exec
when blksum is installed.

The short flags are hyperfine's: -r repeat, -w warm-up. (run's -w, after
iperf3, is the send buffer; a sweep's buffers are --sndbuf's list.) Each
row's time is also given as hyperfine gives it, mean ± σ and min … max
over its measurements, and the optimum line names a size only when it is
faster than every other beyond noise (Welch's t-test over the repeats,
the ratio's 95% interval); otherwise "none clear", with how many repeats
would tell. --export-hyperfine FILE writes hyperfine's
--export-json layout, for its scripts.`

const sweepExample = `  nbdscope sweep --sndbuf default,64k,128k,256k,512k,1m,2m,4m --bytes 4g --repeat 3
  nbdscope sweep --workload write --client-sndbuf default,256k,1m,2m,4m --bytes 4g --repeat 3
  nbdscope sweep --preset sweep --repeat 1 --bytes 1g --markdown
  nbdscope sweep --preset qemu-img-read --bytes 4g --repeat 3 --sndbuf default,256k,1m,2m,4m
  nbdscope sweep --exec 'nbdcopy {uri} null:' --sndbuf default,2m --bytes 1g --save copy`

type sweepFlags struct {
	lists               map[string]*string // buffer setting → sizes to sweep
	bytes               string
	repeat, warmup      int
	asJSON, asCSV, asMD bool
	exec                string
	shell               bool
	save                string
	force               bool
	exports             *exportFlags
	outs                []destination // where the sweep is written (planSweepOutputs)
}

// newSweptCmd is a measuring command that goes through a list of buffer
// sizes (sweep, calibrate): it runs no fixed duration, and leaves out the
// per-side flags of the swept settings, since a buffer's flag there
// (--sndbuf, --client-sndbuf, --client-rcvbuf) is the list of sizes to go
// through and --exec the client to run.
func newSweptCmd(a *app, use, short, long, example string) (*cobra.Command, *loadFlags) {
	names := []string{model.SetExec}
	for _, st := range model.BufferSettings() {
		names = append(names, st.Name)
	}
	return newMeasureCmd(a, use, short, long, example, false, names...)
}

func newSweepCmd(a *app) *cobra.Command {
	var f sweepFlags
	cmd, lf := newSweptCmd(a, "sweep [flags]", "A send-buffer sweep: table, bars and the optimum (--json, --csv, --markdown)",
		sweepLong, sweepExample)
	fs := cmd.Flags()
	f.lists = map[string]*string{}
	for _, st := range model.BufferSettings() {
		v, def := new(string), ""
		if st.Name == model.DefaultSweepSetting {
			def = strings.Join(model.DefaultSweepSizes, ",")
		}
		f.lists[st.Name] = v
		fs.StringVar(v, st.Name, def, "comma-separated "+st.Label+" `SIZES` to sweep (one buffer per sweep)")
		cmd.RegisterFlagCompletionFunc(st.Name, completeBufList)
	}
	fs.StringVar(&f.bytes, "bytes", "4g", "payload `SIZE` to move per measurement, in whole requests (rounded up; at least connections × in flight × request size)")
	fs.IntVarP(&f.repeat, "repeat", "r", 3, "measurements per size, `N` (the median is shown, with mean ± σ and min … max); hyperfine's -r")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (version 2, see docs/cli.md)")
	fs.BoolVar(&f.asCSV, "csv", false, "print CSV")
	fs.BoolVar(&f.asMD, "markdown", false, "print a markdown table")
	fs.StringVar(&f.exec, "exec", "", "sweep the real client `CMD` ({uri}, {socket}, {size} replaced) instead of our load")
	fs.BoolVar(&f.shell, "shell", false, "with --exec: run CMD through /bin/sh -c")
	fs.IntVarP(&f.warmup, "warmup", "w", 1, "with --exec: unmeasured runs before each size's repeats, `N`; -w is hyperfine's warm-up here, not iperf3's buffer (that is --sndbuf)")
	fs.StringVar(&f.save, "save", "", "save the sweep under `NAME` (see 'nbdscope runs')")
	fs.BoolVar(&f.force, "force", false, "with --save: replace an existing run of that name")
	f.exports = addExportFlags(cmd, sweepExports...)
	rateUnit := addRateUnitFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		outs, err := planSweepOutputs(cmd, f.exports)
		if err != nil {
			return err
		}
		if err := setRateUnit(*rateUnit, cmd.Flags().Changed("rate-unit")); err != nil {
			return err
		}
		f.outs = outs
		if err := sideAOnly(cmd.Flags()); err != nil {
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
		if err := f.execSpec(cmd.Flags(), &spec, &cfg); err != nil {
			return err
		}
		if err := a.sweepBytes(&spec, cfg.Sides[0]); err != nil {
			return err
		}
		if f.save != "" {
			if err := a.checkRunName(f.save, f.force); err != nil {
				return fmt.Errorf("--save: %w", err)
			}
		}
		return a.sweep(cfg, spec, f, lf.preset)
	}
	return cmd
}

// sideAOnly refuses the flags a sweep would ignore: it measures side A
// alone (side B stays paused), so side B's settings and the mode of two
// sides running do nothing.
func sideAOnly(fs *pflag.FlagSet) error {
	if fs.Changed("mode") {
		return usageErrorf("sweep: --mode: a sweep measures side A alone, so there is no mode to choose")
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if g := f.Annotations[sideGroupAnnotation]; err == nil && len(g) > 0 && f.Name == g[0]+"-b" {
			err = usageErrorf("sweep: --%s: a sweep moves side A only (side B stays paused); use --%s or --%s-a", f.Name, g[0], g[0])
		}
	})
	return err
}

// spec is the sweep to run: the preset's sweep (or the defaults), with
// every flag the user set winning over it.
func (f *sweepFlags) spec(fs *pflag.FlagSet, preset *model.SweepSpec) (model.SweepSpec, error) {
	spec := model.SweepSpec{}
	if preset != nil {
		spec = *preset
		spec.Sizes = append([]model.Buf(nil), preset.Sizes...)
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
	if err := f.sweptBuffer(fs, &spec); err != nil {
		return spec, err
	}
	if spec.Repeat < 1 || spec.Repeat > 100 {
		return spec, usageErrorf("sweep: --repeat %d: want 1…100", spec.Repeat)
	}
	return spec, nil
}

// sweepBytes checks what a sweep of our load moves per measurement and
// rounds it up to whole requests (saying so when that changed it): at
// least one round of requests, and, on a spawned server read or written
// in order, an export that holds whole requests, or its last would be cut
// short. An exec sweep's bytes are its export's size, left alone.
func (a *app) sweepBytes(spec *model.SweepSpec, sd model.SideConfig) error {
	if spec.Exec != nil {
		return nil
	}
	round := sweep.SweepRound(sd)
	if spec.Bytes < round {
		conns := "1 connection"
		if sd.Connections != 1 {
			conns = fmt.Sprintf("%d connections", sd.Connections)
		}
		return usageErrorf("sweep: --bytes %s is less than one round of requests, %s × %d in flight × %s = %s: want at least --bytes %s",
			units.FormatSize(spec.Bytes), conns, sd.InFlight, units.FormatSize(int64(sd.RequestSize)), units.FormatSize(round), units.FormatSize(round))
	}
	sequential := sd.Workload == model.WorkRead || sd.Workload == model.WorkWrite
	if sd.Target == "" && sequential && sd.Size%int64(sd.RequestSize) != 0 {
		return usageErrorf("sweep: the export's size %s is not a multiple of the request size %s: the %s workload's requests at its end would be cut short; choose sizes that divide",
			units.FormatSize(sd.Size), units.FormatSize(int64(sd.RequestSize)), sd.Workload)
	}
	if moves := sweep.SweepMoves(spec.Bytes, sd); moves != spec.Bytes {
		fmt.Fprintf(a.stderr, "nbdscope: --bytes %d rounded up to whole %s requests: %d (%s) per measurement\n",
			spec.Bytes, units.FormatSize(int64(sd.RequestSize)), moves, units.FormatSize(moves))
		spec.Bytes = moves
	}
	return nil
}

// sweptBuffer sets the buffer swept and its sizes from the one buffer
// flag given; with none, the preset's (or the default: the server's).
func (f *sweepFlags) sweptBuffer(fs *pflag.FlagSet, spec *model.SweepSpec) error {
	name := ""
	for _, st := range model.BufferSettings() {
		if !fs.Changed(st.Name) {
			continue
		}
		if name != "" {
			return usageErrorf("sweep: --%s and --%s: sweep one buffer at a time", name, st.Name)
		}
		name = st.Name
	}
	if name == "" && len(spec.Sizes) > 0 {
		return nil
	}
	if name == "" {
		name = model.DefaultSweepSetting
	}
	st, _ := model.Lookup(name)
	spec.Setting, spec.Sizes = name, nil
	for _, s := range strings.Split(*f.lists[name], ",") {
		if strings.TrimSpace(s) == "" {
			// ParseBuf reads "" as default: "--sndbuf ''" swept only that.
			return usageErrorf("sweep: --%s %q: an empty size in the list; want sizes like default,64k,2m", name, *f.lists[name])
		}
		v, err := st.Parse(s)
		if err != nil {
			return valueError(fs, name, err)
		}
		spec.Sizes = append(spec.Sizes, v.Buf)
	}
	return nil
}

// sweepPair sweeps our load; tests replace it.
var sweepPair = func(ctx context.Context, cfg model.Config, spec model.SweepSpec, progress func(sweep.SweepProgress)) ([]model.SweepRow, error) {
	return sweep.Sweep(ctx, cfg, spec, engine.Options{}, progress)
}

func (a *app) sweep(cfg model.Config, spec model.SweepSpec, f sweepFlags, preset string) error {
	ctx, stop := signalContext()
	defer stop()
	prog := newSweepProgress(a.stderr, isTerminal(a.stderr), time.Now)
	t0 := time.Now()
	cpu0, cpuOK := engine.OwnCPU()
	var rows []model.SweepRow
	var err error
	if x := spec.Exec; x != nil {
		if x.Note != "" {
			fmt.Fprintf(a.stderr, "nbdscope: %s\n", x.Note)
		}
		rows, err = sweep.ExecSweep(ctx, cfg, spec, clientrun.Command{Line: x.Command, Shell: x.Shell}, engine.Options{}, prog.update)
	} else {
		rows, err = sweepPair(ctx, cfg, spec, prog.update)
	}
	prog.finish()
	rep := model.SweepReport{Version: model.SweepVersion, Nbdscope: model.Version, Time: time.Now().UTC(),
		Spec: spec, Config: cfg, Rows: rows, Optimum: sweep.Optimum(rows),
		MacOS: model.MacOSEmulationSwept(platform.Probe(), spec, cfg.Sides[0].Workload)}
	if cpu1, ok := engine.OwnCPU(); ok && cpuOK {
		rep.ControllerCoresBusy = engine.OwnCoresBusy(cpu0, cpu1, time.Since(t0))
	}
	var outcome error
	switch {
	case err != nil && ctx.Err() != nil:
		done := 0 // an exec sweep goes in rounds: count measurements, not sizes
		for _, r := range rows {
			done += r.Repeats
		}
		how := "interrupted"
		sig, bySignal := stoppedBy(ctx)
		if bySignal {
			how = sig.word()
		}
		rep.Partial, rep.PartialReason = true, fmt.Sprintf("%s after %d of %d measurements", how, done, len(spec.Sizes)*spec.Repeat)
		outcome = exitError{exitInterrupted, fmt.Errorf("sweep %s", rep.PartialReason)}
		if bySignal {
			outcome = exitError{exitInterrupted, fmt.Errorf("sweep %s (%s)", rep.PartialReason, sig.name())}
		}
	case err != nil:
		rep.Partial, rep.PartialReason = true, err.Error()
		outcome = err
	}
	if rep.Partial && len(rows) == 0 {
		return outcome // nothing measured: only the error
	}
	// Printed first, so that a save that fails loses nothing, and saved
	// even when printing fails.
	werr := a.printSweep(rep, f)
	if f.save != "" {
		run := model.Report{Version: model.ReportVersion, Nbdscope: rep.Nbdscope, Time: rep.Time, Preset: preset,
			Platform: platform.Probe(), Config: cfg, Sweep: &rep, Partial: rep.Partial, PartialReason: rep.PartialReason}
		if err := a.saveRun(f.save, run, f.force); err != nil {
			return saveOutcome(err, cmp.Or(werr, outcome))
		}
		fmt.Fprintf(a.stderr, "nbdscope: sweep saved as %q\n", f.save)
	}
	return cmp.Or(werr, outcome)
}

// printSweep writes a sweep to every output asked for (sweep_outputs.go).
func (a *app) printSweep(rep model.SweepReport, f sweepFlags) error {
	return a.writeOutputs(f.outs, func(format string, w io.Writer) error {
		return writeSweepAs(format, w, rep, terminalWidth(a.stdout))
	})
}

// execSpec makes spec an exec sweep when --exec is given (or the preset
// has one), with --shell and --warmup winning over the preset's, and
// falls back when the command's program lacks an option it needs.
func (f *sweepFlags) execSpec(fs *pflag.FlagSet, spec *model.SweepSpec, cfg *model.Config) error {
	if fs.Changed("exec") {
		spec.Exec = &model.ExecSpec{Command: f.exec, Warmup: f.warmup}
	}
	x := spec.Exec
	if x == nil {
		for _, n := range []string{"shell", "warmup"} {
			if fs.Changed(n) {
				return usageErrorf("sweep: --%s needs --exec (or a preset with a command)", n)
			}
		}
		return nil
	}
	cp := *x
	x = &cp
	spec.Exec = x
	if fs.Changed("shell") {
		x.Shell = f.shell
	}
	if fs.Changed("warmup") {
		x.Warmup = f.warmup
	}
	if x.Warmup < 0 || x.Warmup > 100 {
		return usageErrorf("sweep: --warmup %d: want 0…100", x.Warmup)
	}
	if spec.Setting != "" && spec.Setting != model.SetSndBuf {
		return usageErrorf("sweep: --exec sweeps the server send buffer only")
	}
	if cfg.Sides[0].Target != "" {
		return usageErrorf("sweep: --exec runs against nbdscope's own server; --target does not apply")
	}
	if fs.Changed("size") && cfg.Sides[0].Size > 0 {
		spec.Bytes = cfg.Sides[0].Size // serve's --size, when given
	}
	if _, err := (clientrun.Command{Line: x.Command, Shell: x.Shell}).Argv(clientrun.Vars{}); err != nil {
		return usageErrorf("sweep: --exec %q: %v", x.Command, err)
	}
	if x.Needs != "" {
		prog, _ := shellword.Split(x.Command)
		if len(prog) == 0 || !clientrun.Supports(prog[0], x.Needs) {
			x.Note = fmt.Sprintf("%s has no %s here; running %q instead", prog[0], x.Needs, x.Fallback)
			x.Command = x.Fallback
		}
	}
	// Refused here (exit 2), not after a server per size has started.
	c := clientrun.Command{Line: x.Command, Shell: x.Shell}
	if err := clientrun.NeedsOne(x.Command, "{uri}", "{socket}"); err != nil {
		return usageErrorf("sweep: --exec %q: %v", x.Command, err)
	}
	if err := c.CheckProgram(); err != nil {
		return usageErrorf("sweep: --exec %q: %v", x.Command, err)
	}
	return nil
}
