package sweep

import (
	"context"
	"errors"

	"nbdscope/clientrun"
	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/shellword"
)

// A calibration measures our load and a real client (qemu-img convert)
// against the same server at the same send buffers, with the two sweeps
// that already measure each: Sweep for our load, ExecSweep for the real
// client. Both read from the side's server: nbdscope's own child, or the
// real server of the side's Server command.

// CalibrateSpec is what to calibrate: the server send buffers, the
// payload each measurement moves (the real client's export size), the
// repeats, and the real client's command ({uri}, {socket}, {size}).
type CalibrateSpec struct {
	Sizes  []model.Buf
	Bytes  int64
	Repeat int
	Client clientrun.Command
}

// CalibrateProgress tells where a calibration is after each sweep of one
// client over every size.
type CalibrateProgress struct {
	Done, Total int
	Client      string // "ours" or the real client's program
}

// Calibrate runs spec on side A of base. The two clients go in rounds,
// ours then the real one, Repeat times (the real client's warm-up in the
// first round only), so a slow stretch of a shared machine meets both
// alike (ExecSweep says why rounds); each row holds each client's median
// measurement by time. On an error the rows hold the sizes both clients
// have measured so far.
func Calibrate(ctx context.Context, base model.Config, spec CalibrateSpec, opts engine.Options, progress func(CalibrateProgress)) ([]model.CalibrationRow, error) {
	if len(spec.Sizes) == 0 || spec.Bytes <= 0 || spec.Repeat < 1 || spec.Client.Line == "" {
		return nil, errors.New("calibrate: need sizes, a positive byte count, at least one repeat and a client command")
	}
	ours := make([][]model.SweepRow, len(spec.Sizes))
	real := make([][]model.SweepRow, len(spec.Sizes))
	prog, _ := shellword.Split(spec.Client.Line)
	pr := CalibrateProgress{Total: 2 * spec.Repeat}
	step := func(client string) {
		pr.Done++
		pr.Client = client
		if progress != nil {
			progress(pr)
		}
	}
	for r := 0; r < spec.Repeat; r++ {
		one := model.SweepSpec{Sizes: spec.Sizes, Bytes: spec.Bytes, Repeat: 1, Setting: model.SetSndBuf}
		rows, err := Sweep(ctx, base, one, opts, nil)
		appendRows(ours, spec.Sizes, rows)
		if err != nil {
			return calibrationRows(spec.Sizes, ours, real), err
		}
		step("ours")
		warm := 0
		if r == 0 {
			warm = 1
		}
		one.Exec = &model.ExecSpec{Command: spec.Client.Line, Shell: spec.Client.Shell, Warmup: warm}
		rows, err = ExecSweep(ctx, base, one, spec.Client, opts, nil)
		appendRows(real, spec.Sizes, rows)
		if err != nil {
			return calibrationRows(spec.Sizes, ours, real), err
		}
		if len(prog) > 0 {
			step(prog[0])
		}
	}
	return calibrationRows(spec.Sizes, ours, real), nil
}

// appendRows files each row under its size.
func appendRows(to [][]model.SweepRow, sizes []model.Buf, rows []model.SweepRow) {
	for _, row := range rows {
		for i, s := range sizes {
			if row.Buffer == s.String() {
				to[i] = append(to[i], row)
				break
			}
		}
	}
}

// calibrationRows are the sizes both clients have measured: each one's
// median measurement by time, and ours / real.
func calibrationRows(sizes []model.Buf, ours, real [][]model.SweepRow) []model.CalibrationRow {
	var out []model.CalibrationRow
	for i, s := range sizes {
		if len(ours[i]) == 0 || len(real[i]) == 0 {
			continue
		}
		o := medianRun(ours[i], func(r model.SweepRow) float64 { return r.Seconds })
		x := medianRun(real[i], func(r model.SweepRow) float64 { return r.Seconds })
		o.Repeats, x.Repeats = len(ours[i]), len(real[i])
		row := model.CalibrationRow{Buffer: s.String(), Effective: x.Effective,
			Ours: model.ClientFiguresOf(o), Real: model.ClientFiguresOf(x)}
		if row.Effective == 0 {
			row.Effective = o.Effective
		}
		row.Ratio = row.Ours.Ratios(row.Real)
		row.RecvCalls = model.RecvCallsDifference(ours[i], real[i])
		both := append(append([]model.SweepRow(nil), ours[i]...), real[i]...)
		row.OtherCoresBusy = worstOther(both, func(r model.SweepRow) *model.Figure { return r.OtherCoresBusy })
		if x.Exec != nil {
			for _, run := range x.Exec.Runs {
				if run.CallsNA != nil {
					row.CallsNA = run.CallsNA
				}
			}
		}
		out = append(out, row)
	}
	return out
}
