package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/model"
)

// TestCalibrationSaysAgreement: calibrate's last line names the buffers
// at which our receive calls per 2 MiB are within 0.75–1.33x of the real
// client's, those outside, and those where the real client's calls were
// not counted; the header names the reader.
func TestCalibrationSaysAgreement(t *testing.T) {
	row := func(buf string, ratio model.Figure) model.CalibrationRow {
		return model.CalibrationRow{Buffer: buf, Ratio: model.ClientRatios{RecvCallsPer2MiB: ratio}}
	}
	rep := model.CalibrationReport{Config: model.Config{Sides: [2]model.SideConfig{{Connections: 1, RequestSize: 2 << 20, InFlight: 8,
		Reader: model.ReaderNetpoller}}},
		Client: "qemu-img convert {uri} null", Repeat: 3,
		Rows: []model.CalibrationRow{row("default", 1.47), row("2m", 1.03), row("4m", 0.74), row("8m", model.Unknown)}}
	var out bytes.Buffer
	WriteCalibration(&out, rep)
	for _, want := range []string{
		"reader netpoller)",
		"Agreement, receive calls per 2 MiB ours / qemu-img within 0.75–1.33x (the ratio's 95% interval over the repeats): within at 2m 1.03x; OUTSIDE at default 1.47x, 4m 0.74x; n/a at 8m (the real client's calls were not counted).",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the calibration lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCalibrationAgreementByInterval: with repeats, the line judges the
// ratio's 95% interval, not the median runs' ratio: an interval inside
// the band agrees, one wholly outside does not, and one across an edge
// is undecided, said as such, whatever the median ratio reads.
func TestCalibrationAgreementByInterval(t *testing.T) {
	rows := func(calls ...float64) []model.SweepRow {
		var out []model.SweepRow
		for _, c := range calls {
			var r model.SweepRow
			r.Figures.Client.RecvCallsPer2MiB = model.Figure(c)
			out = append(out, r)
		}
		return out
	}
	real := rows(10, 10.5, 9.5, 10.2, 9.8)
	row := func(buf string, ours []model.SweepRow, median model.Figure) model.CalibrationRow {
		return model.CalibrationRow{Buffer: buf, Ratio: model.ClientRatios{RecvCallsPer2MiB: median},
			RecvCalls: model.RecvCallsDifference(ours, real, 0.95)}
	}
	steady := row("default", rows(10.1, 9.9, 10.3, 9.7, 10), 1.01)
	far := row("2m", rows(20, 21, 19, 20.5, 19.5), 2.0)
	swinging := row("4m", rows(5, 25, 6, 24, 10), 1.0) // the median run agrees; the runs do not say
	for _, c := range []struct {
		r    model.CalibrationRow
		want model.Agreement
	}{{steady, model.AgreeWithin}, {far, model.AgreeOutside}, {swinging, model.AgreeUndecided}} {
		if got := c.r.Agreement(); got != c.want {
			t.Errorf("%s: agreement %v, want %v (interval %s)", c.r.Buffer, got, c.want, c.r.RecvCalls.Interval())
		}
	}
	line := agreementLine(model.CalibrationReport{Rows: []model.CalibrationRow{steady, far, swinging}}, "qemu-img")
	for _, want := range []string{"within at default 1.00x", "OUTSIDE at 2m 2.00x", "undecided at 4m 1.40x ≈ ["} {
		if !strings.Contains(line, want) {
			t.Errorf("the line lacks %q:\n%s", want, line)
		}
	}
}

// With looks, the header says how many repeats each buffer took and the
// agreement line names each look's level and what it is for.
func TestCalibrationSaysItsLooks(t *testing.T) {
	row := func(buf string, n int, ratio model.Figure) model.CalibrationRow {
		return model.CalibrationRow{Buffer: buf, Ratio: model.ClientRatios{RecvCallsPer2MiB: ratio},
			Ours: model.ClientFigures{Repeats: n}, Real: model.ClientFigures{Repeats: n}}
	}
	rep := model.CalibrationReport{Config: model.Config{Sides: [2]model.SideConfig{{Connections: 1, RequestSize: 2 << 20, InFlight: 8}}},
		Client: "qemu-img convert {uri} null", Repeat: 100, Looks: model.AutoLooks, Confidence: model.AutoLooks.Confidence(),
		Rows: []model.CalibrationRow{row("default", 20, 1.02), row("2m", 50, 1.1)}}
	var out bytes.Buffer
	WriteCalibration(&out, rep)
	for _, want := range []string{
		"each client's median run by time, of 20 repeats at default, 50 at 2m (judged every 10, at most 100).",
		"(the ratio's interval over the repeats, at 98.9% at each of up to 10 looks, so that together they hold it at 95%): within at default 1.02x, 2m 1.10x.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the calibration lacks %q:\n%s", want, out.String())
		}
	}
	rep.OutOfTime = true
	out.Reset()
	WriteCalibration(&out, rep)
	if want := "50 at 2m (judged every 10, at most 100); stopped undecided when its 5 minutes were up (--repeat N takes N, however long)."; !strings.Contains(out.String(), want) {
		t.Errorf("the calibration lacks %q:\n%s", want, out.String())
	}
	rep.Looks, rep.Repeat, rep.Confidence, rep.OutOfTime = model.FixedLooks(3), 3, 0.95, false
	rep.Rows = []model.CalibrationRow{row("default", 3, 1.02)}
	out.Reset()
	WriteCalibration(&out, rep)
	if want := "median run by time, of 3 repeats.\n"; !strings.Contains(out.String(), want) {
		t.Errorf("the calibration lacks %q:\n%s", want, out.String())
	}
}
