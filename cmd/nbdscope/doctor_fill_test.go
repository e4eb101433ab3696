package main

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/probe/sockdiag"
)

// doctorFillOut is the part of 'doctor --json' the fill probe writes, with
// its figures as raw JSON so that a null is told from a missing key.
type doctorFillOut struct {
	BufferFill *struct {
		Seconds float64                      `json:"seconds"`
		Sides   []map[string]json.RawMessage `json:"sides"`
	} `json:"buffer_fill"`
	BufferFillNA string `json:"buffer_fill_na"`
}

// measuresFill: sock_diag is there to sample the fill (Linux only).
const measuresFill = runtime.GOOS == "linux"

var doctorFillKeys = []string{"side", "sndbuf", "sndbuf_effective", "sndbuf_full_pct", "sndbuf_empty_pct", "sndbuf_fill_bytes",
	"receiver", "recv_calls_per_2mib"}

func doctorJSONOf(t *testing.T) (doctorFillOut, map[string]json.RawMessage) {
	t.Helper()
	code, out, errs := runApp(t, "doctor", "--json")
	if code != 0 {
		t.Fatalf("doctor --json: exit %d: %s", code, errs)
	}
	var d doctorFillOut
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	return d, raw
}

// TestDoctorFillProbe runs doctor's fill probe for real (the engine's pair,
// its children this test binary): the JSON has both buffers with every
// figure, measured on Linux, and the text says who waited at each.
func TestDoctorFillProbe(t *testing.T) {
	t.Setenv(asBinaryEnv, "1")
	d, _ := doctorJSONOf(t)
	if d.BufferFill == nil {
		t.Fatalf("buffer_fill null: %s", d.BufferFillNA)
	}
	if len(d.BufferFill.Sides) != 2 {
		t.Fatalf("%d sides in buffer_fill", len(d.BufferFill.Sides))
	}
	for i, want := range []string{`"default"`, `"2m"`} {
		s := d.BufferFill.Sides[i]
		for _, k := range doctorFillKeys {
			if _, ok := s[k]; !ok {
				t.Errorf("side %d: no %q in %v", i, k, s)
			}
		}
		if string(s["sndbuf"]) != want {
			t.Errorf("side %d: sndbuf %s, want %s", i, s["sndbuf"], want)
		}
		if string(s["recv_calls_per_2mib"]) == "null" {
			t.Errorf("side %d: recv calls not measured", i)
		}
		if measuresFill && (string(s["sndbuf_full_pct"]) == "null" || s["words"] == nil) {
			t.Errorf("side %d: fill not measured on Linux: %v", i, s)
		}
	}
}

// TestDoctorFillNA: where sock_diag is not available, the engine's pair
// reports no fill and a warning of kind fill; doctor keeps the figures
// null, says why in fill_na and the text, and still gives the calls.
func TestDoctorFillNA(t *testing.T) {
	old := doctorFillRun
	t.Cleanup(func() { doctorFillRun = old })
	doctorFillRun = func(_ context.Context, cfg model.Config) (model.Report, error) {
		rep := model.Report{}
		for i, sc := range cfg.Sides {
			sm := model.Summary{}
			sm.Settings = model.StampOf(sc)
			sm.Client.RecvCallsPer2MiB = model.Figure(10 - 5*i)
			sm.SetFill(model.NoFill)
			rep.Sides = append(rep.Sides, model.SideReport{Name: sc.Name, Summary: sm})
			// A's as the engine raises it; B's as a run saved before
			// warnings had parameters has it.
			w := model.Warn(sc.ID(), model.FillNotMeasured{Reason: *wire.ReasonOf(&sockdiag.NotAvailableError{What: "socket diagnostics", Reason: "not available on darwin"})})
			if i == 1 {
				w = model.Warning{Side: sc.ID(), Kind: model.WarnFill,
					Text: "side " + sc.Name + ": send-buffer fill n/a: socket diagnostics not available on darwin", Fix: "measured on Linux only"}
			}
			rep.Warnings = append(rep.Warnings, w)
		}
		busy := model.Figure(1.25)
		rep.OtherCoresBusy = &busy
		return rep, nil
	}
	d, _ := doctorJSONOf(t)
	if d.BufferFill == nil || len(d.BufferFill.Sides) != 2 {
		t.Fatalf("buffer_fill: %+v (%s)", d.BufferFill, d.BufferFillNA)
	}
	for i, s := range d.BufferFill.Sides {
		for _, k := range []string{"sndbuf_full_pct", "sndbuf_empty_pct", "sndbuf_fill_bytes"} {
			if string(s[k]) != "null" {
				t.Errorf("side %d: %s = %s, want null", i, k, s[k])
			}
		}
		if got := string(s["fill_na"]); got != `"socket diagnostics not available on darwin (measured on Linux only)"` {
			t.Errorf("side %d: fill_na %s", i, got)
		}
		if got, want := string(s["recv_calls_per_2mib"]), []string{"10", "5"}[i]; got != want {
			t.Errorf("side %d: recv calls %s, want %s", i, got, want)
		}
	}
	code, out, _ := runApp(t, "doctor")
	if code != 0 || !strings.Contains(out, "  A at the OS default (effective ") ||
		!strings.Contains(out, "fill n/a: socket diagnostics not available on darwin (measured on Linux only); client recv calls/2MiB 10.0") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "▲ other processes kept 1.25 cores busy meanwhile: these figures are slowed by them") {
		t.Errorf("doctor does not say the probe was slowed:\n%s", out)
	}
}

// TestDoctorFillFails: a probe whose pair cannot start leaves buffer_fill
// null with the reason, and doctor still prints everything else.
func TestDoctorFillFails(t *testing.T) {
	old := doctorFillRun
	t.Cleanup(func() { doctorFillRun = old })
	doctorFillRun = func(context.Context, model.Config) (model.Report, error) {
		return model.Report{}, errors.New("side A: server: exec format error")
	}
	d, raw := doctorJSONOf(t)
	if d.BufferFill != nil || string(raw["buffer_fill"]) != "null" {
		t.Errorf("buffer_fill %s, want null", raw["buffer_fill"])
	}
	if d.BufferFillNA != "the probe's pair: side A: server: exec format error" {
		t.Errorf("buffer_fill_na %q", d.BufferFillNA)
	}
	if _, ok := raw["page_fault_us"]; !ok {
		t.Error("the other probes went missing")
	}
	code, out, _ := runApp(t, "doctor")
	if code != 0 || !strings.Contains(out, "✗ buffer fill: n/a: the probe's pair: side A: server: exec format error\n") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
}
