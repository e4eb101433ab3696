package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/clientrun"
	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/presets"
	"nbdscope/report"
	"nbdscope/shellword"
	"nbdscope/sweep"
	"nbdscope/units"
)

const calibrateLong = `Run our load and a real client (qemu-img convert, unless --client says
otherwise) against the same server at the same send buffers, and print each
client's receive calls, receive EAGAIN, wake-ups (voluntary + involuntary
context switches) and CPU per 2 MiB, and their ratio ours / real: how far
nbdscope's stand-in is from the client it stands for, on this machine.

The server is nbdscope's own (the null backend) or, with --server 'CMD', a
real one (qemu-nbd, nbdkit) whose send buffer is set from outside on each
connection. Each measurement moves --bytes (the real client's export is that
size); the two clients go in rounds, ours then the real one, and each figure
is that client's median measurement by time. --repeat auto (the default)
judges every 10 rounds, at most 100 (none begun after 5 minutes), and stops
measuring a buffer once its agreement is decided: each look's interval is widened so that the looks
together are as sure as one 95% interval. --repeat N judges once, after N. Our load is
side A's settings (1 connection, 2 MiB requests, 8 in flight, zero scan by
default: qemu-img convert's shape). The real client's socket calls are
counted exactly (per process by bpf, at the socket layer, where allowed,
else per thread by perf); where neither is allowed they are n/a, with the
reason (see nbdscope doctor).`

const calibrateExample = `  nbdscope calibrate
  nbdscope calibrate --bytes 4g --repeat 5 --sndbuf default,256k,2m
  nbdscope calibrate --server "qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{\"file\":{\"driver\":\"null-co\",\"size\":{size}}}'" --json`

type calibrateFlags struct {
	sndbuf, bytes, client, repeat string
	asJSON                        bool
}

func newCalibrateCmd(a *app) *cobra.Command {
	var f calibrateFlags
	cmd, lf := newSweptCmd(a, "calibrate [flags]", "Our load beside qemu-img on the same server and buffers: calls, EAGAIN, wake-ups, CPU per 2 MiB and their ratio",
		calibrateLong, calibrateExample)
	fs := cmd.Flags()
	fs.StringVar(&f.sndbuf, "sndbuf", "default,2m", "comma-separated server send buffer `SIZES` to calibrate at")
	cmd.RegisterFlagCompletionFunc("sndbuf", completeBufList)
	fs.StringVar(&f.bytes, "bytes", "1g", "payload `SIZE` per measurement (the real client's export size), in whole requests")
	fs.StringVarP(&f.repeat, "repeat", "r", "auto", "measurements per client and size: `N`, or auto (a look every 10, at most 100 or 5 minutes, until each buffer's agreement is decided)")
	fs.StringVar(&f.client, "client", presets.QemuImgRead, "the real client `CMD` ({uri}, {socket}, {size} replaced)")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, spec, err := f.plan(a, cmd, lf)
		if err != nil {
			return err
		}
		return a.calibrate(cfg, spec, f)
	}
	return cmd
}

// plan checks the flags and the real client's program before anything
// runs: the configuration (side A is the one measured) and the spec.
func (f *calibrateFlags) plan(a *app, cmd *cobra.Command, lf *loadFlags) (model.Config, sweep.CalibrateSpec, error) {
	var spec sweep.CalibrateSpec
	if err := sideAOnly(cmd.Flags()); err != nil {
		return model.Config{}, spec, err
	}
	cfg, err := lf.config(a)
	if err != nil {
		return cfg, spec, err
	}
	sd := cfg.Sides[0]
	if sd.Workload != model.WorkRead {
		return cfg, spec, usageErrorf("calibrate: --workload %s: a calibration compares reads (qemu-img convert reads the export); want read", sd.Workload)
	}
	if sd.Target != "" {
		return cfg, spec, usageErrorf("calibrate: --target: both clients read from a server nbdscope starts (its own, or --server 'CMD')")
	}
	if sd.Exec != "" {
		return cfg, spec, usageErrorf("calibrate: the real client is --client's, not the side's exec")
	}
	if spec.Looks, err = looksOf(f.repeat); err != nil {
		return cfg, spec, err
	}
	if spec.Sizes, err = sndbufList(f.sndbuf); err != nil {
		return cfg, spec, err
	}
	n, err := units.ParseSize(f.bytes)
	if err != nil || n <= 0 {
		return cfg, spec, usageErrorf("calibrate: --bytes %q: want a positive size (1g, 512m)", f.bytes)
	}
	ss := model.SweepSpec{Bytes: n, Sizes: spec.Sizes}
	if err := a.sweepBytes(&ss, sd); err != nil { // one round at least, whole requests
		return cfg, spec, err
	}
	spec.Bytes = ss.Bytes
	spec.Client = clientrun.Command{Line: f.client}
	if _, err := spec.Client.Argv(clientrun.Vars{}); err != nil {
		return cfg, spec, usageErrorf("calibrate: --client %q: %v", f.client, err)
	}
	return cfg, spec, clientInstalled(f.client)
}

// looksOf parses --repeat: auto, or a number of repeats judged once.
func looksOf(repeat string) (model.LookPlan, error) {
	if strings.TrimSpace(repeat) == "auto" {
		return model.AutoLooks, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(repeat))
	if err != nil || n < 1 || n > 100 {
		return model.LookPlan{}, usageErrorf("calibrate: --repeat %q: want 1…100, or auto", repeat)
	}
	return model.FixedLooks(n), nil
}

// clientInstalled refuses a real client whose program is not on PATH
// before anything runs (exit 1, as a sweep whose client cannot start).
func clientInstalled(line string) error {
	argv, _ := shellword.Split(line)
	if len(argv) == 0 {
		return usageErrorf("calibrate: --client is empty")
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		fix := "install it"
		if argv[0] == "qemu-img" {
			fix = "install it (apt-get install qemu-utils; brew install qemu)"
		}
		return fmt.Errorf("calibrate: %s is not on PATH: calibrate compares our load with the real client %s; %s, or name another with --client 'CMD'",
			argv[0], argv[0], fix)
	}
	return nil
}

// sndbufList parses --sndbuf's list of sizes.
func sndbufList(list string) ([]model.Buf, error) {
	st, _ := model.Lookup(model.SetSndBuf)
	var sizes []model.Buf
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			return nil, usageErrorf("calibrate: --sndbuf %q: an empty size in the list; want sizes like default,2m", list)
		}
		v, err := st.Parse(s)
		if err != nil {
			return nil, valueError(nil, model.SetSndBuf, err)
		}
		sizes = append(sizes, v.Buf)
	}
	return sizes, nil
}

// calibrate runs the calibration and prints it; interrupted or failed, it
// prints what both clients measured and marks it partial.
func (a *app) calibrate(cfg model.Config, spec sweep.CalibrateSpec, f calibrateFlags) error {
	ctx, stop := signalContext()
	defer stop()
	progress := func(p sweep.CalibrateProgress) {
		fmt.Fprintf(a.stderr, "calibrate: round %d of at most %d: %s measured at %s\n", p.Round, p.Most, p.Client, strings.Join(p.Sizes, ", "))
		if p.Look != nil {
			fmt.Fprintf(a.stderr, "calibrate: after %d repeats: %s\n", p.Round, report.LookLine(p.Look))
		}
	}
	res, err := sweep.Calibrate(ctx, cfg, spec, engine.Options{}, progress)
	rows := res.Rows
	rep := model.CalibrationReport{Version: model.CalibrationVersion, Nbdscope: model.Version, Time: time.Now().UTC(),
		Server: cfg.Sides[0].Server, Client: spec.Client.Line, Bytes: spec.Bytes, Repeat: spec.Looks.Most,
		Looks: spec.Looks, OutOfTime: res.OutOfTime, Confidence: spec.Looks.Confidence(), Config: cfg, Rows: rows}
	var outcome error
	switch {
	case err != nil && ctx.Err() != nil:
		rep.Partial, rep.PartialReason = true, "interrupted"
		outcome = exitError{exitInterrupted, fmt.Errorf("calibrate interrupted")}
	case err != nil:
		rep.Partial, rep.PartialReason = true, err.Error()
		outcome = err
	}
	if rep.Partial && len(rows) == 0 {
		return outcome
	}
	var werr error
	if f.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		werr = enc.Encode(rep)
	} else {
		werr = writeErr(a.stdout, func(w io.Writer) { report.WriteCalibration(w, rep) })
	}
	if werr != nil {
		return werr
	}
	return outcome
}
