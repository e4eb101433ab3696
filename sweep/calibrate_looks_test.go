package sweep

import (
	"errors"
	"testing"
	"time"

	"nbdscope/model"
)

// fakeCalibration measures calls from two functions of (size, round)
// instead of running clients, and counts what it measured.
func fakeCalibration(plan model.LookPlan, ours, real func(size string, round int) float64) (*calibration, map[string]int) {
	sizes := []model.Buf{{Kind: model.BufDefault}, {Kind: model.BufSize, Bytes: 2 << 20}}
	c := newCalibration(CalibrateSpec{Sizes: sizes, Bytes: 1 << 30, Looks: plan})
	c.realName = "qemu-img"
	measured := map[string]int{}
	round := 0
	rows := func(sizes []model.Buf, calls func(string, int) float64) []model.SweepRow {
		var out []model.SweepRow
		for _, s := range sizes {
			r := model.SweepRow{Buffer: s.String(), Seconds: 1}
			r.Figures.Client.RecvCallsPer2MiB = model.Figure(calls(s.String(), round))
			out = append(out, r)
		}
		return out
	}
	c.measureOurs = func(sizes []model.Buf) ([]model.SweepRow, error) {
		round++
		for _, s := range sizes {
			measured[s.String()]++
		}
		return rows(sizes, ours), nil
	}
	c.measureReal = func(sizes []model.Buf, _ int) ([]model.SweepRow, error) { return rows(sizes, real), nil }
	return c, measured
}

// steady swings ±3% about mean; swinging between 2 and 28 about 15, as
// calls do when a reader falls into either regime run by run.
func steady(mean float64) func(string, int) float64 {
	return func(_ string, r int) float64 { return mean * (1 + 0.03*float64(r%3-1)) }
}

func swinging(_ string, r int) float64 { return 2 + 26*float64(r%2) }

// A calibration with looks stops measuring a buffer once its agreement
// is decided, and goes on at the others up to the plan's most: default,
// where both clients make 10 calls, is within after the first look (10
// repeats); 2m, where ours swings 2–28 against qemu-img's steady 15,
// stays undecided and takes all 50.
func TestCalibrationStopsMeasuringDecidedBuffers(t *testing.T) {
	ours := func(s string, r int) float64 {
		if s == "2m" {
			return swinging(s, r)
		}
		return steady(10)(s, r)
	}
	real := func(s string, r int) float64 {
		if s == "2m" {
			return steady(15)(s, r)
		}
		return steady(10)(s, r+1)
	}
	c, measured := fakeCalibration(model.LookPlan{Every: 10, Most: 50}, ours, real)
	var looks []int
	res, err := c.run(func(p CalibrateProgress) {
		if p.Look != nil {
			looks = append(looks, p.Round)
		}
	})
	rows := res.Rows
	if err != nil || len(rows) != 2 || res.OutOfTime {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	if measured["default"] != 10 || measured["2m"] != 50 {
		t.Errorf("measured default %d times, 2m %d: want 10 and 50", measured["default"], measured["2m"])
	}
	if want := []int{10, 20, 30, 40, 50}; len(looks) != len(want) || looks[0] != 10 || looks[4] != 50 {
		t.Errorf("looks after rounds %v, want %v", looks, want)
	}
	if rows[0].Agreement() != model.AgreeWithin || rows[0].Ours.Repeats != 10 {
		t.Errorf("default: %v after %d repeats, want within after 10", rows[0].Agreement(), rows[0].Ours.Repeats)
	}
	if rows[1].Agreement() != model.AgreeUndecided || rows[1].Real.Repeats != 50 {
		t.Errorf("2m: %v after %d repeats, want undecided after 50", rows[1].Agreement(), rows[1].Real.Repeats)
	}
	if got, want := rows[0].RecvCalls.Confidence, (model.LookPlan{Every: 10, Most: 50}).Confidence(); got != want || want < 0.98 {
		t.Errorf("each look's interval at %v, want %v (five looks: about 98.4%%)", got, want)
	}
}

// When every buffer is decided at a look, the calibration ends there;
// with --repeat N (one look) it takes N rounds and judges at 95%.
func TestCalibrationEndsWhenAllDecided(t *testing.T) {
	c, measured := fakeCalibration(model.AutoLooks, steady(10), steady(20))
	res, err := c.run(nil)
	rows := res.Rows
	if err != nil || measured["default"] != 10 || measured["2m"] != 10 {
		t.Fatalf("measured %v (err %v), want 10 rounds at each", measured, err)
	}
	for _, r := range rows {
		if r.Agreement() != model.AgreeOutside {
			t.Errorf("%s: %v, want OUTSIDE (ours half the real client's calls)", r.Buffer, r.Agreement())
		}
	}
	c, measured = fakeCalibration(model.FixedLooks(3), swinging, steady(15))
	res, _ = c.run(nil)
	rows = res.Rows
	if measured["default"] != 3 || rows[0].RecvCalls.Confidence != 0.95 {
		t.Errorf("--repeat 3: %d rounds at %v, want 3 at 0.95", measured["default"], rows[0].RecvCalls.Confidence)
	}
}

// A failed measurement ends the calibration with what both clients
// measured before it.
func TestCalibrationKeepsRowsOnError(t *testing.T) {
	c, _ := fakeCalibration(model.AutoLooks, steady(10), steady(10))
	n := 0
	ours := c.measureOurs
	c.measureOurs = func(sizes []model.Buf) ([]model.SweepRow, error) {
		if n++; n == 4 {
			return nil, errors.New("server died")
		}
		return ours(sizes)
	}
	res, err := c.run(nil)
	rows := res.Rows
	if err == nil || len(rows) != 2 || rows[0].Ours.Repeats != 3 {
		t.Fatalf("rows %+v, err %v: want 2 rows of 3 repeats and the error", rows, err)
	}
}

// --repeat auto begins no round after the look past its time budget
// while a buffer is undecided, and says so; a round takes 7 s here on a
// fake clock (about what one against qemu-nbd takes), so the budget of
// 5 minutes ends it at the look after 43 rounds: 50.
func TestCalibrationStopsAtItsBudget(t *testing.T) {
	c, measured := fakeCalibration(model.AutoLooks, swinging, steady(15))
	clock := time.Unix(0, 0)
	ours := c.measureOurs
	c.measureOurs = func(sizes []model.Buf) ([]model.SweepRow, error) {
		clock = clock.Add(7 * time.Second)
		return ours(sizes)
	}
	c.now = func() time.Time { return clock }
	res, err := c.run(nil)
	if err != nil || !res.OutOfTime || measured["default"] != 50 {
		t.Fatalf("out of time %v after %d rounds (err %v): want it said after 50", res.OutOfTime, measured["default"], err)
	}
	if res.Rows[0].Agreement() != model.AgreeUndecided {
		t.Errorf("default: %v, want undecided (ours swings 2–28 about qemu-img's 15)", res.Rows[0].Agreement())
	}
	c, _ = fakeCalibration(model.AutoLooks, steady(10), steady(10))
	c.now = func() time.Time { clock = clock.Add(time.Hour); return clock }
	if res, _ := c.run(nil); res.OutOfTime {
		t.Errorf("every buffer decided at the first look, and still said out of time")
	}
}
