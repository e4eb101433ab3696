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
	"syscall"
	"text/tabwriter"

	"github.com/mattn/go-isatty"

	"nbdscope/engine"
	"nbdscope/units"
)

func init() {
	extraCommands["run"] = cmdRun
}

const runUsage = `Usage: nbdscope run [flags]

A headless run of the pair: a summary table per side, or with --json/--csv
every sample and event too. Example:

  nbdscope run --sndbuf-b 2m --at 5s:b.sndbuf=64k --duration 10s --json

Flags:
`

// startPair starts the engine; tests replace it.
var startPair = func(ctx context.Context, cfg engine.Config) (*engine.Pair, error) {
	return engine.Start(ctx, cfg)
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, runUsage); fs.PrintDefaults() }
	lf := newLoadFlags(fs, true)
	asJSON := fs.Bool("json", false, "print the whole run as one JSON object")
	asCSV := fs.Bool("csv", false, "print the samples as CSV")
	save := fs.String("save", "", "save the run under `NAME` (see 'nbdscope runs')")
	force := fs.Bool("force", false, "with --save: replace an existing run of that name")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON && *asCSV {
		return usageErrorf("run: --json and --csv exclude each other")
	}
	cfg, err := lf.config()
	if err != nil {
		return err
	}
	if cfg.Duration <= 0 {
		return usageErrorf("run: --duration must be positive")
	}
	if *save != "" {
		// Refuse a taken name before the run, not after it.
		if err := checkRunName(*save, *force); err != nil {
			return err
		}
	}
	rep, err := runPair(cfg, !*asJSON && !*asCSV)
	if err != nil {
		return err
	}
	rep.Preset = lf.preset
	if *save != "" {
		if err := saveRun(*save, rep, *force); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "nbdscope: run saved as %q\n", *save)
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case *asCSV:
		return writeSamplesCSV(os.Stdout, rep)
	}
	printSummary(os.Stdout, rep)
	return nil
}

// saveRun stores a run; replaced by the presets package when wired in.
var saveRun = func(name string, rep engine.Report, force bool) error {
	return fmt.Errorf("saving runs is not available")
}

// checkRunName refuses a run name that is invalid or taken (without force).
var checkRunName = func(name string, force bool) error { return nil }

// runPair runs cfg to its end and returns the report. On a terminal it
// shows a progress line on stderr.
func runPair(cfg engine.Config, progress bool) (engine.Report, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := startPair(ctx, cfg)
	if err != nil {
		return engine.Report{}, err
	}
	tty := progress && isatty.IsTerminal(os.Stderr.Fd())
	var last [2]engine.Sample
	var runErr error
	for u := range p.Updates() {
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
			c := u.Crash
			fmt.Fprintf(os.Stderr, "\nnbdscope: side %s %s died (%s): %s\n", c.Side, c.Role, c.Status, tail(c.Stderr))
		case u.Warning != nil:
			w := u.Warning
			fmt.Fprintf(os.Stderr, "\nnbdscope: warning: %s\n", w.Text)
			if w.Fix != "" {
				fmt.Fprintf(os.Stderr, "nbdscope:   fix: %s\n", w.Fix)
			}
		case u.Done != nil:
			if u.Done.Err != nil && ctx.Err() != nil {
				runErr = fmt.Errorf("interrupted")
			}
		}
	}
	if tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	rep := p.Report()
	p.Stop()
	if runErr != nil && len(rep.Samples) == 0 {
		return rep, runErr
	}
	return rep, nil
}

func tail(lines []string) string {
	if len(lines) == 0 {
		return "(no output)"
	}
	return lines[len(lines)-1]
}

func rate(f engine.Figure) string {
	if !f.Known() {
		return "n/a"
	}
	return units.FormatRate(float64(f))
}

func fig(f engine.Figure, prec int) string {
	if !f.Known() {
		return "n/a"
	}
	return strconv.FormatFloat(float64(f), 'f', prec, 64)
}

func ratio(a, b engine.Figure) string {
	if !a.Known() || !b.Known() || a == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", float64(b)/float64(a))
}

func bufText(req string, eff int) string {
	if eff == 0 {
		return req
	}
	return fmt.Sprintf("%s (%s)", req, units.FormatSize(int64(eff)))
}

// printSummary prints the per-side table and B/A ratios.
func printSummary(w io.Writer, rep engine.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\tthroughput\trecv/2MiB client\trecv/2MiB server\tEAGAIN/2MiB\tclient user+sys s\tserver user+sys s\tclient s/GiB\tserver s/GiB\tsndbuf server (eff)\tsndbuf client (eff)\tp50 ms\tp99 ms\terrors\t")
	for i, s := range rep.Sides {
		sm := s.Summary
		srvCPU, srvRecv, srvGiB := "n/a", "n/a", "n/a"
		if sm.Server != nil {
			srvCPU = fmt.Sprintf("%s+%s", fig(sm.Server.UserS, 2), fig(sm.Server.SysS, 2))
			srvRecv = fig(sm.Server.RecvCallsPer2MiB, 1)
			srvGiB = fig(sm.Server.CPUSPerGiB, 3)
		}
		wl := rep.Config.Sides[i].Workload
		_ = wl
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", s.Name, rate(sm.ThroughputBps),
			fig(sm.Client.RecvCallsPer2MiB, 1), srvRecv, fig(sm.Client.EAGAINPer2MiB, 1),
			fmt.Sprintf("%s+%s", fig(sm.Client.UserS, 2), fig(sm.Client.SysS, 2)), srvCPU,
			fig(sm.Client.CPUSPerGiB, 3), srvGiB,
			bufText(sm.SndBuf.ServerRequested, sm.SndBuf.ServerEffective), bufText(sm.SndBuf.ClientRequested, sm.SndBuf.ClientEffective),
			fig(sm.LatencyP50Ms, 2), fig(sm.LatencyP99Ms, 2), sm.Errors)
	}
	tw.Flush()
	if len(rep.Sides) == 2 {
		a, b := rep.Sides[0].Summary, rep.Sides[1].Summary
		fmt.Fprintf(w, "\nB/A: throughput %s, client recv calls/2MiB %s, client CPU s/GiB %s\n",
			ratio(a.ThroughputBps, b.ThroughputBps), ratio(a.Client.RecvCallsPer2MiB, b.Client.RecvCallsPer2MiB), ratio(a.Client.CPUSPerGiB, b.Client.CPUSPerGiB))
	}
	for _, e := range rep.Events {
		fmt.Fprintf(w, "event %6.2fs %s %s: %s → %s\n", e.T, e.Side, e.Setting, e.From, e.To)
	}
	for _, c := range rep.Crashes {
		fmt.Fprintf(w, "crash %6.2fs %s %s: %s\n", c.T, c.Side, c.Role, c.Status)
	}
}

func writeSamplesCSV(w io.Writer, rep engine.Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t", "side", "active", "bytes", "throughput_bps", "client_recv_calls_per_2mib", "client_send_calls_per_2mib",
		"client_eagain_per_2mib", "client_user_s", "client_sys_s", "server_recv_calls_per_2mib", "server_send_calls_per_2mib",
		"server_user_s", "server_sys_s", "server_sndbuf_effective", "client_sndbuf_effective", "latency_p50_ms", "latency_p99_ms", "connections", "errors"})
	f := func(v engine.Figure) string {
		if !v.Known() {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', 6, 64)
	}
	for _, s := range rep.Samples {
		srv := []string{"", "", "", ""}
		if s.Server != nil {
			srv = []string{f(s.Server.RecvCallsPer2MiB), f(s.Server.SendCallsPer2MiB), f(s.Server.UserS), f(s.Server.SysS)}
		}
		row := []string{strconv.FormatFloat(s.T, 'f', 3, 64), s.Side, strconv.FormatBool(s.Active), strconv.FormatUint(s.Bytes, 10), f(s.ThroughputBps),
			f(s.Client.RecvCallsPer2MiB), f(s.Client.SendCallsPer2MiB), f(s.Client.EAGAINPer2MiB), f(s.Client.UserS), f(s.Client.SysS)}
		row = append(row, srv...)
		row = append(row, strconv.Itoa(s.SndBuf.ServerEffective), strconv.Itoa(s.SndBuf.ClientEffective), f(s.LatencyP50Ms), f(s.LatencyP99Ms),
			strconv.Itoa(s.Connections), strconv.FormatUint(s.Errors, 10))
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
