// Package sweep runs sweeps: of our load, a pair whose side A moves a set
// amount of payload at each size of a buffer setting (Sweep), and of a
// real client against a server child per size (ExecSweep); each row is the
// median of its repeats, measured in rounds. It finds the optimum of the
// rows. What a sweep is (its spec, rows and report, the pace of a
// measurement) is model's; the pair and the children are the engine's.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"nbdscope/engine"
	"nbdscope/model"
)

// OptimumTolerance is how close to the best throughput a size counts as
// just as good (the model's, which the sweep's tables print).
const OptimumTolerance = model.OptimumTolerance

// Optimum finds the fastest row and judges it against noise
// (model.OptimumOf, the one verdict every output reads); nil when no row
// has a throughput above 0.
func Optimum(rows []model.SweepRow) *model.SweepOptimum { return model.OptimumOf(rows) }

// SweepProgress tells where a sweep is, after each measurement.
type SweepProgress struct {
	Size      string         // the size just measured
	SizeIndex int            // 1-based
	Sizes     int            // how many sizes
	Repeat    int            // 1-based repeat of this size
	Repeats   int            // repeats per size
	Done      int            // measurements done, of Total
	Total     int            //
	Last      model.SweepRow // the measurement just made
}

// Sweep runs spec on side A of base (side B stays paused) and reports a row
// per size: the median of its repeats. progress, if set, is called after
// each measurement. The measurements go in rounds, one of each size in
// turn, as an exec sweep's do (ExecSweep says why). On an error the rows
// hold the measurements made so far (Repeats says how many).
func Sweep(ctx context.Context, base model.Config, spec model.SweepSpec, opts engine.Options, progress func(SweepProgress)) ([]model.SweepRow, error) {
	if len(spec.Sizes) == 0 || spec.Bytes <= 0 || spec.Repeat < 1 {
		return nil, errors.New("sweep: need sizes, a positive byte count and at least one repeat")
	}
	if round := SweepRound(base.Sides[0]); spec.Bytes < round {
		return nil, fmt.Errorf("sweep: %d bytes is less than one round of requests (%d)", spec.Bytes, round)
	}
	if spec.Setting == "" {
		spec.Setting = model.DefaultSweepSetting
	}
	swept, err := model.LookupSetting(spec.Setting)
	if err != nil || swept.Type != model.TypeBuf {
		return nil, fmt.Errorf("sweep: %q is not a buffer setting", spec.Setting)
	}
	runs := make([][]model.SweepRow, len(spec.Sizes))
	pr := SweepProgress{Sizes: len(spec.Sizes), Repeats: spec.Repeat, Total: len(spec.Sizes) * spec.Repeat}
	for r := 0; r < spec.Repeat; r++ {
		for i, size := range spec.Sizes {
			if err := ctx.Err(); err != nil {
				return sweepMedians(runs), err
			}
			cfg := base
			cfg.Mode = model.ModeConcurrent
			cfg.Duration = 0
			cfg.Script = nil
			if err := cfg.Sides[0].SetValue(swept, model.Value{Buf: size}); err != nil {
				return sweepMedians(runs), err
			}
			row, err := sweepOne(ctx, cfg, swept, spec.Bytes, opts)
			if err != nil {
				return sweepMedians(runs), fmt.Errorf("sweep %s=%s: %w", spec.Setting, size, err)
			}
			row.Buffer = size.String()
			runs[i] = append(runs[i], row)
			if progress != nil {
				pr.Size, pr.SizeIndex, pr.Repeat, pr.Last = size.String(), i+1, r+1, row
				pr.Done++
				progress(pr)
			}
		}
	}
	return sweepMedians(runs), nil
}

// sweepMedians is, for each size with a measurement, the median one by
// time, with the count of measurements.
func sweepMedians(runs [][]model.SweepRow) []model.SweepRow {
	var rows []model.SweepRow
	for _, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		med := medianRun(rs, func(r model.SweepRow) float64 { return r.Seconds })
		med.Repeats = len(rs)
		med.OtherCoresBusy = worstOther(rs, func(r model.SweepRow) *model.Figure { return r.OtherCoresBusy })
		ms := make([]model.SweepMeasurement, len(rs))
		for i, r := range rs {
			ms[i] = sweepMeasurement(r)
		}
		med.SetSpread(ms)
		rows = append(rows, med)
	}
	return rows
}

// worstOther is the most CPU other processes took during any of a size's
// measurements (nil when none was measured): a row is as trustworthy as
// its noisiest measurement.
func worstOther[T any](runs []T, other func(T) *model.Figure) *model.Figure {
	var worst *model.Figure
	for _, r := range runs {
		if o := other(r); o != nil && (worst == nil || *o > *worst) {
			worst = o
		}
	}
	return worst
}

// medianRun is the run of median time (of an even count, the slower of
// the middle two): the one measurement whose figures a sweep's row shows,
// in a sweep of our load and of a real client alike.
func medianRun[T any](runs []T, seconds func(T) float64) T {
	byTime := append([]T(nil), runs...)
	sort.Slice(byTime, func(i, j int) bool { return seconds(byTime[i]) < seconds(byTime[j]) })
	return byTime[len(byTime)/2]
}

// SweepRound is the bytes of one round of a side's requests: one on each
// of its connections × in flight slots. A measurement of less would leave
// slots idle and measure a shallower load than the one configured.
func SweepRound(sd model.SideConfig) int64 {
	return int64(sd.Connections) * int64(sd.InFlight) * int64(sd.RequestSize)
}

// SweepMoves is what a measurement of bytes moves: bytes rounded up to
// whole requests of the side's request size.
func SweepMoves(bytes int64, sd model.SideConfig) int64 {
	r := int64(sd.RequestSize)
	return (bytes + r - 1) / r * r
}

// sweepWarmup is what each measurement moves first, unmeasured, at most:
// the connections' buffers, the server's cache and the CPUs' clocks come
// up to speed.
const sweepWarmup = 256 << 20

// sweepLimit bounds one measurement.
const sweepLimit = 5 * time.Minute

// sweepOne measures bytes on side A, rounded up to whole requests: a fresh
// pair with both sides paused, a warm-up of up to sweepWarmup (at least a
// round of requests), then the measurement itself (Pair.MeasureRequests).
func sweepOne(ctx context.Context, cfg model.Config, swept *model.Setting, bytes int64, opts engine.Options) (model.SweepRow, error) {
	var row model.SweepRow
	sd := cfg.Sides[0]
	req := int64(sd.RequestSize)
	requests := SweepMoves(bytes, sd) / req
	round := SweepRound(sd) / req
	warm := max(round, min(requests, (sweepWarmup+req-1)/req))
	opts.StartPaused = true
	p, err := engine.StartWith(ctx, cfg, opts)
	if err != nil {
		return row, err
	}
	defer stopOnCancel(ctx, p)()
	crashed := readCrashes(p)
	if _, _, err := p.MeasureRequests(0, warm, sweepLimit); err != nil {
		return row, sweepFailure(ctx, err, crashed)
	}
	f, other, err := p.MeasureRequests(0, requests, sweepLimit)
	if err != nil {
		return row, sweepFailure(ctx, err, crashed)
	}
	if want := uint64(requests * req); f.Bytes != want {
		return row, fmt.Errorf("the measurement's %d requests moved %d bytes, not %d: the export's size is not a multiple of the request size (%d), so requests at its end were cut short; choose a request size that divides it",
			requests, f.Bytes, want, req)
	}
	row.Figures = f
	row.Seconds = f.Seconds
	row.Effective = swept.Effective(f.SndBuf)
	row.Placement = f.Placement
	row.ClientUserS, row.ClientSysS = float64(f.Client.UserS), float64(f.Client.SysS)
	row.ServerUserS, row.ServerSysS = model.Unknown, model.Unknown
	if f.Server != nil {
		row.ServerUserS, row.ServerSysS = f.Server.UserS, f.Server.SysS
	}
	row.ThroughputBps = f.ThroughputBps
	// The receiver of the bulk data (unknown for an external target's
	// server), both directions' EAGAIN.
	row.RecvPer2MiB, row.EAGAINPer2MiB = model.Unknown, model.Unknown
	if r := f.Receiver(); r != nil {
		row.RecvPer2MiB, row.EAGAINPer2MiB = r.RecvCallsPer2MiB, r.EAGAINPer2MiB
	}
	row.OtherCoresBusy = other
	return row, nil
}

// stopOnCancel stops p as soon as ctx is done, so a measurement waiting
// on its load ends at once; the returned function stops p and returns once
// it has stopped, whichever came first.
func stopOnCancel(ctx context.Context, p *engine.Pair) func() {
	stopped := make(chan struct{})
	cancel := context.AfterFunc(ctx, func() { p.Stop(); close(stopped) })
	return func() {
		if cancel() {
			p.Stop()
			return
		}
		<-stopped
	}
}

// readCrashes reads p's updates, so its sampler never waits for a reader,
// and hands on the first crash.
func readCrashes(p *engine.Pair) <-chan *model.Crash {
	crashed := make(chan *model.Crash, 1)
	go func() {
		for u := range p.Updates() {
			if u.Crash != nil {
				select {
				case crashed <- u.Crash:
				default:
				}
			}
		}
	}()
	return crashed
}

// sweepFailure is why a measurement failed: the context's end when it was
// cancelled; a crash's own report when a child died (it comes a moment
// after the call that found the child gone).
func sweepFailure(ctx context.Context, err error, crashed <-chan *model.Crash) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !errors.Is(err, engine.ErrChildGone) {
		return err
	}
	select {
	case c := <-crashed:
		return errors.New(c.Text())
	case <-time.After(2 * time.Second):
		return err
	}
}
