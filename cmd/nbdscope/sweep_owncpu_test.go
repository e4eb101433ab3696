package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/sweep"
)

// sweep --json carries what the controller's own process spent over the
// sweep (controller_cores_busy), measured around the sweep itself.
func TestSweepJSONHasControllerCPU(t *testing.T) {
	old := sweepPair
	t.Cleanup(func() { sweepPair = old })
	sweepPair = func(_ context.Context, _ model.Config, spec model.SweepSpec, _ func(sweep.SweepProgress)) ([]model.SweepRow, error) {
		b := make([]byte, 8<<20) // some work of the controller's own
		for range 4 {
			sha256.Sum256(b)
		}
		return []model.SweepRow{{Buffer: spec.Sizes[0].String(), Repeats: 1, Figures: model.Figures{ThroughputBps: 1 << 30}}}, nil
	}
	code, out, errs := runApp(t, "sweep", "--bytes", "64m", "--repeat", "1", "--sndbuf", "default", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Controller *float64 `json:"controller_cores_busy"`
	}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Controller == nil || !(*rep.Controller > 0) {
		t.Errorf("controller_cores_busy %v in %s", rep.Controller, out)
	}
}
