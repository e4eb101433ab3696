package sweep

import (
	"context"
	"errors"
	"time"

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
// payload each measurement moves (the real client's export size), when
// to judge (a look every Looks.Every repeats, at most Looks.Most), and
// the real client's command ({uri}, {socket}, {size}).
type CalibrateSpec struct {
	Sizes  []model.Buf
	Bytes  int64
	Looks  model.LookPlan
	Client clientrun.Command
}

// CalibrateProgress tells where a calibration is after each sweep of one
// client over the buffers still measured, and what each look found.
type CalibrateProgress struct {
	Round, Most int
	Client      string   // "ours" or the real client's program
	Sizes       []string // the buffers measured in this round
	// Look is set after a look's round: every buffer's row so far.
	Look []model.CalibrationRow
}

// Calibrate runs spec on side A of base. The two clients go in rounds,
// taking turns going first (roundOrder; the real client's warm-up in the
// first round only), so a slow stretch of a shared machine meets both
// alike (ExecSweep says why rounds). After each look's round every buffer is
// judged; one whose agreement is decided leaves the later rounds
// (model.LookPlan). Each row holds each client's median measurement by
// time. On an error the rows hold the sizes both clients have measured
// so far.
func Calibrate(ctx context.Context, base model.Config, spec CalibrateSpec, opts engine.Options, progress func(CalibrateProgress)) (CalibrateResult, error) {
	if len(spec.Sizes) == 0 || spec.Bytes <= 0 || !spec.Looks.Valid() || spec.Client.Line == "" {
		return CalibrateResult{}, errors.New("calibrate: need sizes, a positive byte count, a plan of looks and a client command")
	}
	c := newCalibration(spec)
	prog, _ := shellword.Split(spec.Client.Line)
	c.realName = "real client"
	if len(prog) > 0 {
		c.realName = prog[0]
	}
	c.measureOurs = func(sizes []model.Buf) ([]model.SweepRow, error) {
		one := model.SweepSpec{Sizes: sizes, Bytes: spec.Bytes, Repeat: 1, Setting: model.SetSndBuf}
		return Sweep(ctx, base, one, opts, nil)
	}
	c.measureReal = func(sizes []model.Buf, round int) ([]model.SweepRow, error) {
		one := model.SweepSpec{Sizes: sizes, Bytes: spec.Bytes, Repeat: 1, Setting: model.SetSndBuf}
		warm := 0
		if round == 1 {
			warm = 1
		}
		one.Exec = &model.ExecSpec{Command: spec.Client.Line, Shell: spec.Client.Shell, Warmup: warm}
		return ExecSweep(ctx, base, one, spec.Client, opts, nil)
	}
	return c.run(progress)
}

// CalibrateResult is a calibration's rows, and whether it stopped at its
// time budget with a size undecided.
type CalibrateResult struct {
	Rows      []model.CalibrationRow
	OutOfTime bool
}

// run measures in rounds until every size is decided, the plan's most, or
// a look past the plan's time budget.
func (c *calibration) run(progress func(CalibrateProgress)) (CalibrateResult, error) {
	start := c.now()
	budget := time.Duration(c.spec.Looks.BudgetS * float64(time.Second))
	for r := 1; r <= c.spec.Looks.Most; r++ {
		sizes := c.openSizes()
		if len(sizes) == 0 {
			break
		}
		pr := CalibrateProgress{Round: r, Most: c.spec.Looks.Most, Sizes: bufNames(sizes)}
		say := func(client string) {
			if pr.Client = client; progress != nil {
				progress(pr)
			}
		}
		for i, who := range roundOrder(r) {
			var rows []model.SweepRow
			var err error
			if who == "ours" {
				rows, err = c.measureOurs(sizes)
				appendRows(c.ours, c.spec.Sizes, rows)
			} else {
				rows, err = c.measureReal(sizes, r)
				appendRows(c.real, c.spec.Sizes, rows)
				who = c.realName
			}
			if err != nil {
				return CalibrateResult{Rows: c.rows()}, err
			}
			if i == 1 && c.spec.Looks.IsLook(r) {
				pr.Look = c.look()
			}
			say(who)
		}
		if pr.Look != nil && budget > 0 && c.now().Sub(start) >= budget && len(c.openSizes()) > 0 && r < c.spec.Looks.Most {
			return CalibrateResult{Rows: c.rows(), OutOfTime: true}, nil
		}
	}
	return CalibrateResult{Rows: c.rows()}, nil
}

// calibration is a calibration's measurements so far, per size, and the
// sizes still measured.
type calibration struct {
	spec       CalibrateSpec
	ours, real [][]model.SweepRow
	open       []bool
	realName   string // the real client's program, for progress
	now        func() time.Time
	// measureOurs and measureReal take one measurement of each client at
	// each of the sizes (a sweep of our load, an exec sweep of the real
	// client, warmed up in round 1).
	measureOurs func(sizes []model.Buf) ([]model.SweepRow, error)
	measureReal func(sizes []model.Buf, round int) ([]model.SweepRow, error)
}

// newCalibration is spec's calibration before any measurement.
func newCalibration(spec CalibrateSpec) *calibration {
	c := &calibration{spec: spec, ours: make([][]model.SweepRow, len(spec.Sizes)), real: make([][]model.SweepRow, len(spec.Sizes)),
		open: make([]bool, len(spec.Sizes)), now: time.Now}
	for i := range c.open {
		c.open[i] = true
	}
	return c
}

// openSizes are the sizes not yet decided.
func (c *calibration) openSizes() []model.Buf {
	var out []model.Buf
	for i, s := range c.spec.Sizes {
		if c.open[i] {
			out = append(out, s)
		}
	}
	return out
}

// look judges every size and closes the decided ones.
func (c *calibration) look() []model.CalibrationRow {
	rows := c.rows()
	for _, row := range rows {
		for i, s := range c.spec.Sizes {
			if s.String() == row.Buffer && row.Decided() {
				c.open[i] = false
			}
		}
	}
	return rows
}

// rows are the sizes both clients have measured, judged at the plan's
// level.
func (c *calibration) rows() []model.CalibrationRow {
	return calibrationRows(c.spec.Sizes, c.ours, c.real, c.spec.Looks.Confidence())
}

// roundOrder is which client goes first in round r (from 1): ours in
// odd rounds, the real client in even ones. Each runs on a machine the
// other has just left (its memory freed, its server stopped); always
// going second would give one of them that state every time, and a
// drift over a pair of rounds meets both alike.
func roundOrder(r int) [2]string {
	if r%2 == 1 {
		return [2]string{"ours", "real"}
	}
	return [2]string{"real", "ours"}
}

// bufNames are the sizes as the rows name them.
func bufNames(sizes []model.Buf) []string {
	out := make([]string, len(sizes))
	for i, s := range sizes {
		out[i] = s.String()
	}
	return out
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
// median measurement by time, ours / real, and the receive calls judged
// with the interval at conf.
func calibrationRows(sizes []model.Buf, ours, real [][]model.SweepRow, conf float64) []model.CalibrationRow {
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
		row.RecvCalls = model.RecvCallsDifference(ours[i], real[i], conf)
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
