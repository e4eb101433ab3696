package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

// doctor's buffer-fill probe (issue 24): a short run of the engine's own
// default pair, side A at the OS default unix send buffer and B at 2 MiB,
// taking turns, says how full each send buffer was and who waited on
// whom, in the pace lines' words, with the client's receive calls per
// 2 MiB at each. It answers, for this machine, whether the buffer's size
// can matter here at all before anyone reads a sweep.

// doctorFillSamples is how many samples with its load running each side
// must have before the probe ends: most of three turns (a turn is a
// second, 10 samples at doctorFillInterval), so that the verdict has
// three batches a side to judge the noise by (two is the least Welch's
// test takes; a third keeps one slow turn from deciding). The probe ends on them, not after a set
// time: a side's first turn waits for its buffers to warm (up to 5 s), so
// on a loaded machine a fixed 3.5 s run left B no turn at all (CI, under
// every package's tests at once), and its figures null.
const doctorFillSamples = 28

// doctorFillLimit bounds the probe where a side never gets its samples.
const doctorFillLimit = 15 * time.Second

// doctorFillInterval is the probe's sample interval: short, so its turns
// hold several samples each.
const doctorFillInterval = 100 * time.Millisecond

// doctorFill is the probe's result in 'doctor --json' ("buffer_fill").
type doctorFill struct {
	Seconds float64          `json:"seconds"` // the probe's run, under load
	Mode    model.Mode       `json:"mode"`
	Sides   []doctorFillSide `json:"sides"`
	// OtherCoresBusy is what other processes kept busy meanwhile, in
	// cores on average (null where not measured): from a quarter of a core
	// the figures are slowed by them.
	OtherCoresBusy *model.Figure `json:"other_cores_busy"`
	// Verdict is what the pair showed of the buffer's effect here, judged
	// over its turns (model.GapVerdictOf): doctor's last line.
	Verdict model.GapVerdict `json:"verdict"`
}

// doctorFillSide is one buffer of the probe: the fill figures as a run's
// summary has them (null with fill_na saying why when not measured), and
// the receiver's calls per 2 MiB.
type doctorFillSide struct {
	Side            string            `json:"side"`
	SndBuf          string            `json:"sndbuf"`           // as requested: default, 2m
	SndBufEffective int               `json:"sndbuf_effective"` // bytes, as the kernel gave it
	FullPct         model.MaybeFigure `json:"sndbuf_full_pct"`
	EmptyPct        model.MaybeFigure `json:"sndbuf_empty_pct"`
	FillBytes       model.MaybeFigure `json:"sndbuf_fill_bytes"`
	FillNA          string            `json:"fill_na,omitempty"`
	Receiver        string            `json:"receiver"` // whose receive calls: client (reads)
	RecvCalls       model.Figure      `json:"recv_calls_per_2mib"`
	Words           string            `json:"words,omitempty"` // who waited, as the pace lines say it
}

// doctorFillRun runs the probe's pair until each side has had
// doctorFillSamples samples of its load running (or cfg.Duration is over)
// and returns its report; tests replace it.
var doctorFillRun = func(ctx context.Context, cfg model.Config) (model.Report, error) {
	p, err := startPair(ctx, cfg)
	if err != nil {
		return model.Report{}, err
	}
	var active [2]int
	for u := range p.Updates() { // warnings and samples are read off the report
		if s := u.Sample; s != nil && s.Active && s.Bytes > 0 && s.Side.Index() >= 0 {
			active[s.Side.Index()]++
			if min(active[0], active[1]) >= doctorFillSamples {
				break
			}
		}
	}
	p.Stop()
	for range p.Updates() {
	}
	return p.Report(), nil
}

// doctorFillConfig is the default pair, A at the OS default send buffer and
// B at 2 MiB, taking turns so that neither slows the other.
func doctorFillConfig() model.Config {
	cfg := model.DefaultConfig()
	cfg.Sides[0].SndBuf = model.Buf{Kind: model.BufDefault}
	cfg.Sides[1].SndBuf = model.Buf{Kind: model.BufSize, Bytes: 2 << 20}
	cfg.Mode = model.ModeAlternate
	cfg.Duration = model.Duration(doctorFillLimit)
	cfg.Interval = model.Duration(doctorFillInterval)
	return cfg
}

// probeFill runs the probe; an error says why nothing was measured.
func probeFill(ctx context.Context) (*doctorFill, error) {
	cfg := doctorFillConfig()
	rep, err := doctorFillRun(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("the probe's pair: %w", err)
	}
	if len(rep.Sides) != 2 {
		return nil, fmt.Errorf("the probe's pair reported %d sides, not 2", len(rep.Sides))
	}
	if len(rep.Crashes) > 0 {
		return nil, fmt.Errorf("the probe's pair: %s", rep.Crashes[0].Text())
	}
	df := &doctorFill{Seconds: lastSampleAt(rep), Mode: cfg.Mode, OtherCoresBusy: rep.OtherCoresBusy, Verdict: model.GapVerdictOf(rep)}
	for i, s := range rep.Sides {
		df.Sides = append(df.Sides, fillSideOf(rep, s, cfg.Sides[i].SndBuf.String()))
	}
	return df, nil
}

// lastSampleAt is how long the probe's run went: its last sample's time.
func lastSampleAt(rep model.Report) float64 {
	var t float64
	for _, s := range rep.Samples {
		t = max(t, s.T)
	}
	return t
}

// fillSideOf is one side's part of the probe, from its run's summary.
func fillSideOf(rep model.Report, s model.SideReport, requested string) doctorFillSide {
	sm := s.Summary
	fl := sm.Fill()
	wl := sm.Settings.Workload
	ds := doctorFillSide{Side: s.Name, SndBuf: requested, SndBufEffective: sm.SndBuf.ServerEffective,
		FullPct: model.Measured(fl.FullPct), EmptyPct: model.Measured(fl.EmptyPct), FillBytes: model.Measured(fl.Bytes),
		Receiver: model.ReceiverName(wl), RecvCalls: sm.ReceiverCallsPer2MiB()}
	if fl.Known() {
		ds.Words = model.FillText(fl, model.FlowOf(wl), model.Pace{})
	} else {
		ds.FillNA = fillWhy(rep, s.ID())
	}
	return ds
}

// fillWhy is why a side's fill is n/a: the engine's warning of kind fill
// for it, with its fix.
func fillWhy(rep model.Report, side model.SideID) string {
	for _, w := range rep.Warnings {
		if w.Kind != model.WarnFill || (w.Side != side && w.Side != model.WholePair) {
			continue
		}
		if p, ok := w.What.(model.FillNotMeasured); ok {
			return phrase.ReasonLong(p.Reason) + fixNote(phrase.WarningFix(w))
		}
		why := w.Text // a run saved before warnings had parameters
		if i := strings.Index(why, "fill n/a: "); i >= 0 {
			why = why[i+len("fill n/a: "):]
		}
		return why + fixNote(w.Fix)
	}
	return "no sample of the data sockets in the run"
}

// fixNote is " (fix)", "" for none.
func fixNote(fix string) string {
	if fix == "" {
		return ""
	}
	return " (" + fix + ")"
}

// printFill is the probe's lines in doctor's text.
func printFill(out io.Writer, df *doctorFill, err error) {
	if err != nil {
		fmt.Fprintf(out, "✗ buffer fill: n/a: %v\n", err)
		return
	}
	fmt.Fprintf(out, "• buffer fill: a %s run of the default pair (%s), each side's server sending:\n", time.Duration(df.Seconds*float64(time.Second)).Round(100*time.Millisecond).String(), df.Mode)
	for _, s := range df.Sides {
		at := "the OS default"
		if s.SndBuf != "default" {
			at = s.SndBuf
		}
		at += " (effective " + units.FormatSize(int64(s.SndBufEffective)) + ")"
		words := s.Words
		if words == "" {
			words = "fill n/a: " + s.FillNA
		}
		fmt.Fprintf(out, "  %s at %s: %s; %s recv calls/2MiB %s\n", s.Side, at, words, s.Receiver, s.RecvCalls.Fixed(1))
	}
	if o := df.OtherCoresBusy; o != nil && o.Known() && *o >= model.OtherCoresNoisy {
		fmt.Fprintf(out, "  ▲ other processes kept %s cores busy meanwhile: these figures are slowed by them; run doctor again when the machine is quiet\n", o.Fixed(2))
	}
}
