package main

import (
	"encoding/json"
	"strings"
	"testing"

	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/phrase"
)

// TestCalibrateQemuImg runs a small calibration against our own server:
// both clients' figures and their ratios are there at each buffer (the
// real client's calls where counting is allowed, else the reason).
func TestCalibrateQemuImg(t *testing.T) {
	testbin.Need(t, "apt-get install qemu-utils", "qemu-img")
	code, out, errs := runBin(t, "calibrate", "--bytes", "64m", "--repeat", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep model.CalibrationReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("calibrate --json: %v\n%s", err, out)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Buffer != "default" || rep.Rows[1].Buffer != "2m" {
		t.Fatalf("rows %+v, want default and 2m", rep.Rows)
	}
	if rep.Repeat != 1 || rep.Looks != model.FixedLooks(1) || rep.Confidence != 0.95 {
		t.Errorf("--repeat 1: repeat %d, looks %+v, confidence %v: want one look at 95%%", rep.Repeat, rep.Looks, rep.Confidence)
	}
	for _, r := range rep.Rows {
		for name, f := range map[string]model.Figure{
			"ours recv calls": r.Ours.RecvCallsPer2MiB, "ours EAGAIN": r.Ours.RecvEAGAINPer2MiB,
			"ours wake-ups": r.Ours.WakeupsPer2MiB, "ours cpu": r.Ours.CPUMsPer2MiB,
			"qemu-img wake-ups": r.Real.WakeupsPer2MiB, "qemu-img cpu": r.Real.CPUMsPer2MiB,
			"wake-ups ratio": r.Ratio.WakeupsPer2MiB, "cpu ratio": r.Ratio.CPUMsPer2MiB,
		} {
			if !f.Known() || f <= 0 {
				t.Errorf("%s: %s = %v, want a positive figure", r.Buffer, name, f)
			}
		}
		if r.CallsNA != nil {
			t.Logf("%s: qemu-img's calls n/a here: %s", r.Buffer, phrase.ReasonWithFix(*r.CallsNA))
			continue
		}
		if !r.Real.RecvCallsPer2MiB.Known() || r.Real.RecvCallsPer2MiB < 1 {
			t.Errorf("%s: qemu-img recv calls per 2 MiB = %v, want at least one (a 2 MiB reply takes one read at least)", r.Buffer, r.Real.RecvCallsPer2MiB)
		}
		want := r.Ours.RecvCallsPer2MiB / r.Real.RecvCallsPer2MiB
		if got := r.Ratio.RecvCallsPer2MiB; !got.Known() || got < want*0.999 || got > want*1.001 {
			t.Errorf("%s: recv calls ratio %v, want ours / qemu-img = %v", r.Buffer, got, want)
		}
	}
	// The text table has each client's line and the ratio's.
	code, out, errs = runBin(t, "calibrate", "--bytes", "64m", "--repeat", "1", "--sndbuf", "2m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{"| 2m (", "| nbdscope's load |", "| qemu-img |", "| ours / qemu-img |"} {
		if !strings.Contains(out, s) {
			t.Errorf("calibrate's table has no %q:\n%s", s, out)
		}
	}
}

// TestCalibrateMissingClient: a client not on PATH is named, exit 1,
// before anything runs.
func TestCalibrateMissingClient(t *testing.T) {
	code, out, errs := runBin(t, "calibrate", "--bytes", "64m", "--client", "nbdscope-no-such-client {uri}")
	if code != exitFailure || out != "" || !strings.Contains(errs, "nbdscope-no-such-client is not on PATH") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 1 and the program named", code, out, errs)
	}
	if strings.Contains(errs, "calibrate: round") {
		t.Errorf("measured before refusing: %s", errs)
	}
}

// TestCalibrateRepeatFlag: --repeat takes a number of repeats or auto;
// anything else is refused before anything runs (exit 2).
func TestCalibrateRepeatFlag(t *testing.T) {
	for _, bad := range []string{"0", "101", "many", "-3", ""} {
		code, out, errs := runBin(t, "calibrate", "--repeat", bad)
		if code != exitUsage || out != "" || !strings.Contains(errs, "want 1…100, or auto") || strings.Contains(errs, "calibrate: round") {
			t.Errorf("--repeat %q: exit %d, stdout %q, stderr %q: want 2 and the accepted values", bad, code, out, errs)
		}
	}
	for in, want := range map[string]model.LookPlan{"auto": model.AutoLooks, " 7": model.FixedLooks(7)} {
		if got, err := looksOf(in); err != nil || got != want {
			t.Errorf("--repeat %q: %+v, %v; want %+v", in, got, err, want)
		}
	}
}
