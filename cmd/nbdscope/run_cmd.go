package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/segtable"
	"nbdscope/units"
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
	cmd := &cobra.Command{
		Use:     "run [flags]",
		Short:   "A headless run with a summary table (--json, --csv, --save)",
		Long:    runLong,
		Example: runExample,
		Args:    noArgs,
	}
	setExits(cmd, exitsMeasure)
	lf := addLoadFlags(a, cmd, true)
	fs := cmd.Flags()
	fs.BoolVarP(&f.asJSON, "json", "J", false, "print the whole run as one JSON object (version 1, see the README)")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
			for i, s := range cfg.Sides {
				if s.Name == u.Sample.Side && u.Sample.Active {
					last[i] = *u.Sample
				}
			}
			if tty {
				fmt.Fprintf(os.Stderr, "\r\033[K%5.1fs/%v  A %s  B %s", u.Sample.T, cfg.Duration.D(),
					rate(last[0].ThroughputBps), rate(last[1].ThroughputBps))
			}
		case u.Crash != nil:
			fmt.Fprintf(os.Stderr, "\nnbdscope: %s\n", u.Crash.Text())
		case u.Warning != nil:
			w := u.Warning
			fmt.Fprintf(os.Stderr, "\nnbdscope: warning: %s\n", w.Text)
			if w.Fix != "" {
				fmt.Fprintf(os.Stderr, "nbdscope:   fix: %s\n", w.Fix)
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

func ratio(a, b model.Figure) string { return model.Ratio(a, b).Ratio() }

func bufText(req string, eff int) string {
	if eff == 0 {
		return req
	}
	return fmt.Sprintf("%s (%s)", req, units.FormatSize(int64(eff)))
}

// summaryGetter reads one figure of a summary.
type summaryGetter func(sm model.Summary) model.Figure

// srvFig reads a server figure (unknown for an external target).
func srvFig(f func(p model.Process) model.Figure) summaryGetter {
	return func(sm model.Summary) model.Figure {
		if sm.Server == nil {
			return model.Unknown
		}
		return f(*sm.Server)
	}
}

// cliFig reads a client figure.
func cliFig(f func(p model.Process) model.Figure) summaryGetter {
	return func(sm model.Summary) model.Figure { return f(sm.Client) }
}

// summaryRows are the run table's figure rows: name, figure, format, and
// whether a B/A ratio means something.
var summaryRows = []struct {
	name   string
	get    summaryGetter
	format func(model.Figure) string
	ratio  bool
}{
	{"throughput", func(sm model.Summary) model.Figure { return sm.ThroughputBps }, rate, true},
	{"send buffer full %", fillFig(func(f model.Fill) model.Figure { return f.FullPct }), f1, false},
	{"send buffer empty %", fillFig(func(f model.Fill) model.Figure { return f.EmptyPct }), f1, false},
	{"send buffer fill bytes", fillFig(func(f model.Fill) model.Figure { return f.Bytes }), size, false},
	{"client recv calls/2MiB", cliFig(func(p model.Process) model.Figure { return p.RecvCallsPer2MiB }), f1, true},
	{"server recv calls/2MiB", srvFig(func(p model.Process) model.Figure { return p.RecvCallsPer2MiB }), f1, true},
	{"client send calls/2MiB", cliFig(func(p model.Process) model.Figure { return p.SendCallsPer2MiB }), f1, true},
	{"server send calls/2MiB", srvFig(func(p model.Process) model.Figure { return p.SendCallsPer2MiB }), f1, true},
	{"client recv EAGAIN/2MiB", cliFig(func(p model.Process) model.Figure { return p.RecvEAGAINPer2MiB }), f1, true},
	{"client send EAGAIN/2MiB", cliFig(func(p model.Process) model.Figure { return p.SendEAGAINPer2MiB }), f1, true},
	{"server recv EAGAIN/2MiB", srvFig(func(p model.Process) model.Figure { return p.RecvEAGAINPer2MiB }), f1, true},
	{"server send EAGAIN/2MiB", srvFig(func(p model.Process) model.Figure { return p.SendEAGAINPer2MiB }), f1, true},
	{"client wake-ups/2MiB (vol)", cliFig(func(p model.Process) model.Figure { return p.VolCSPer2MiB }), f1, true},
	{"client wake-ups/2MiB (invol)", cliFig(func(p model.Process) model.Figure { return p.InvolCSPer2MiB }), f1, true},
	{"server wake-ups/2MiB (vol)", srvFig(func(p model.Process) model.Figure { return p.VolCSPer2MiB }), f1, true},
	{"server wake-ups/2MiB (invol)", srvFig(func(p model.Process) model.Figure { return p.InvolCSPer2MiB }), f1, true},
	{"client page faults/2MiB", cliFig(func(p model.Process) model.Figure { return p.FaultsPer2MiB }), f1, true},
	{"server page faults/2MiB", srvFig(func(p model.Process) model.Figure { return p.FaultsPer2MiB }), f1, true},
	{"client user s", cliFig(func(p model.Process) model.Figure { return p.UserS }), f2, false},
	{"client sys s", cliFig(func(p model.Process) model.Figure { return p.SysS }), f2, false},
	{"server user s", srvFig(func(p model.Process) model.Figure { return p.UserS }), f2, false},
	{"server sys s", srvFig(func(p model.Process) model.Figure { return p.SysS }), f2, false},
	{"client cores busy", cliFig(func(p model.Process) model.Figure { return p.CoresBusy }), f2, true},
	{"server cores busy", srvFig(func(p model.Process) model.Figure { return p.CoresBusy }), f2, true},
	{"client CPU s/GiB", cliFig(func(p model.Process) model.Figure { return p.CPUSPerGiB }), f3, true},
	{"server CPU s/GiB", srvFig(func(p model.Process) model.Figure { return p.CPUSPerGiB }), f3, true},
	{"latency p50 ms", func(sm model.Summary) model.Figure { return sm.LatencyP50Ms }, f2, true},
	{"latency p99 ms", func(sm model.Summary) model.Figure { return sm.LatencyP99Ms }, f2, true},
	{"latency max ms", func(sm model.Summary) model.Figure { return sm.LatencyMaxMs }, f2, true},
}

// summaryText are the summary's rows of text: the settings in effect and
// what was moved, a cell per side.
var summaryText = []struct {
	name string
	get  func(sm model.Summary) string
}{
	{"server SO_SNDBUF (eff.)", func(sm model.Summary) string { return bufText(sm.SndBuf.ServerRequested, sm.SndBuf.ServerEffective) }},
	{"client SO_SNDBUF (eff.)", func(sm model.Summary) string { return bufText(sm.SndBuf.ClientRequested, sm.SndBuf.ClientEffective) }},
	{"client SO_RCVBUF (eff.)", func(sm model.Summary) string {
		return bufText(sm.SndBuf.ClientRcvRequested, sm.SndBuf.ClientRcvEffective)
	}},
	{"placement (load/server cpu)", func(sm model.Summary) string {
		return sm.Placement.Setting + " (" + sm.Placement.LoadCPUs + "/" + sm.Placement.ServerCPUs + ")"
	}},
	{"payload / time", func(sm model.Summary) string {
		return fmt.Sprintf("%s / %.1fs", units.FormatBytes(float64(sm.Bytes)), sm.Seconds)
	}},
	{"errors", func(sm model.Summary) string { return strconv.FormatUint(sm.Errors, 10) }},
	{"consume", consumeText},
}

// printSummary prints one row per figure, a column per side and the B/A
// ratio, so it reads at 80 columns; then the segments, digests, events,
// crashes and warnings.
func printSummary(w io.Writer, rep model.Report) {
	if len(rep.Sides) == 0 {
		return
	}
	printSummaryTable(w, rep)
	printSegments(w, rep)
	printRunNotes(w, rep)
}

// printSummaryTable is the table of figures and settings.
func printSummaryTable(w io.Writer, rep model.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "figure"
	for _, s := range rep.Sides {
		head += "\t" + s.Name
	}
	if len(rep.Sides) == 2 {
		head += "\tB/A"
	}
	fmt.Fprintln(tw, head+"\t")
	for _, r := range summaryRows {
		line := r.name
		var vals []model.Figure
		for _, s := range rep.Sides {
			v := r.get(s.Summary)
			vals = append(vals, v)
			line += "\t" + r.format(v)
		}
		if len(vals) == 2 {
			if r.ratio {
				line += "\t" + ratio(vals[0], vals[1]) + spreadCell(rep, r.get)
			} else {
				line += "\t"
			}
		}
		fmt.Fprintln(tw, line+"\t")
	}
	for _, r := range append(spreadRows, summaryText...) {
		line := r.name
		for _, s := range rep.Sides {
			line += "\t" + r.get(s.Summary)
		}
		if len(rep.Sides) == 2 {
			line += "\t"
		}
		fmt.Fprintln(tw, line+"\t")
	}
	tw.Flush()
}

// printRunNotes are the lines after the table: root digests, events,
// crashes, warnings and whether the run is partial.
func printRunNotes(w io.Writer, rep model.Report) {
	printSidesNoise(w, rep)
	printOtherCPU(w, rep)
	printNoise(w, rep)
	if sidesSharedCores(rep) {
		fmt.Fprintln(w, "pace: not judged — the sides ran at once on shared cores, so a process short of its core may have waited for the other side")
	}
	for _, s := range rep.Sides {
		// What set each side's pace: with one side waiting on its small
		// buffer and the other bound by its client's work, the gap
		// between them reads off these two lines.
		if p := model.PaceOf(s.Summary.Figures); p.Client.Known() && !s.Summary.Changed && paceJudged(rep) {
			fmt.Fprintf(w, "pace %s (%s): %s\n", s.Name, s.Summary.Settings.SndBuf, model.PaceText(p, nil, s.Summary.Client.FaultsPer2MiB))
		}
	}
	for _, s := range rep.Sides {
		if d := s.Summary.Consumed.RootDigest; d != "" {
			fmt.Fprintf(w, "root digest %s (blksum's digest of the export, last of %d full passes): %s\n", s.Name, s.Summary.Consumed.HashPasses, d)
		}
	}
	for _, e := range rep.Events {
		side := e.Side
		if side == "" {
			side = "pair"
		}
		reopened := ""
		if e.Reconnected {
			reopened = " (connections re-opened: a TCP buffer set once stays locked)"
		}
		fmt.Fprintf(w, "event %6.2fs %s %s: %s → %s%s\n", e.T, side, e.Setting, e.From, e.To, reopened)
	}
	for _, c := range rep.Crashes {
		fmt.Fprintf(w, "crash %6.2fs %s\n", c.T, c.Text())
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(w, "warning %6.2fs %s\n", wn.T, wn.Text)
	}
	if rep.Partial {
		fmt.Fprintf(w, "PARTIAL RUN: %s\n", rep.PartialReason)
	}
}

func f1(v model.Figure) string { return v.Fixed(1) }
func f2(v model.Figure) string { return v.Fixed(2) }
func f3(v model.Figure) string { return v.Fixed(3) }

// consumeText is what a side's consume mode found, in a table cell.
func consumeText(sm model.Summary) string {
	c := sm.Consumed
	switch sm.Consume {
	case model.ConsumeScan:
		return fmt.Sprintf("scan: %d/%d zero", c.ZeroBuffers, c.ScannedBuffers)
	case model.ConsumeHash:
		return fmt.Sprintf("hash×%d: %d passes", c.HashThreads, c.HashPasses)
	}
	return sm.Consume
}

// printSegments prints, for a run with changes, one row per stretch of
// unchanged settings of each side: the settings that set it apart and the
// headline figures, so before and after read from one run.
func printSegments(w io.Writer, rep model.Report) {
	if !rep.Changed() {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "segments (one row per stretch of unchanged settings):")
	if t, ok := segtable.Of(rep); ok {
		segmentRates(&t, rep)
		t.WriteText(w)
	}
	printSegmentSpreads(w, rep)
	// What set each stretch's pace: a change of buffer shows as waiting
	// before and work after (or the other way round).
	for _, s := range rep.Sides {
		for _, g := range s.Segments {
			if p := model.PaceOf(g.Figures); p.Client.Known() && len(s.Segments) > 1 && paceJudged(rep) {
				fmt.Fprintf(w, "pace %s %.1f–%.1f s (%s): %s\n", s.Name, g.From, g.To, g.Settings.SndBuf, model.PaceText(p, nil, g.Client.FaultsPer2MiB))
			}
		}
	}
}

// printOtherCPU says how much CPU other processes took during the run,
// and warns when it was enough to slow the figures.
func printOtherCPU(w io.Writer, rep model.Report) {
	o := rep.OtherCoresBusy
	if o == nil || !o.Known() {
		return
	}
	if rep.Noisy() {
		fmt.Fprintf(w, "▲ other processes kept %s cores busy on average during the run (of %d): every figure here is slowed by them, and no pace is judged\n",
			o.Fixed(2), rep.Platform.Cores)
		return
	}
	fmt.Fprintf(w, "other processes: %s cores busy on average during the run (quiet)\n", o.Fixed(2))
}

// paceJudged: a pace can be told from the run (no other load took the
// cores, and the sides did not share them).
func paceJudged(rep model.Report) bool { return !rep.Noisy() && !sidesSharedCores(rep) }

// sidesSharedCores reports whether the sides ran at once (concurrent mode)
// with a CPU in common: then a process short of its core may have waited
// for the other side, not for its peer, and PaceOf's "neither used all of
// its CPU" would be wrong.
func sidesSharedCores(rep model.Report) bool {
	if rep.Config.Mode != model.ModeConcurrent || len(rep.Sides) < 2 {
		return false
	}
	cpus := func(pl model.Placement) []string {
		return append(strings.Split(pl.LoadCPUs, ","), strings.Split(pl.ServerCPUs, ",")...)
	}
	a, b := cpus(rep.Sides[0].Summary.Placement), cpus(rep.Sides[1].Summary.Placement)
	for _, c := range a {
		if c != "" && c != "any" && slices.Contains(b, c) { // "any": not held, and then no bound is claimed anyway
			return true
		}
	}
	return false
}
