package engine

import (
	"testing"
	"time"

	"nbdscope/model"
)

// otherCoresBusy is the machine's busy CPU less the controller's and the
// samples' (every sample, active or not, client and server), per second.
func TestOtherCoresBusy(t *testing.T) {
	t0 := time.Now()
	m := machineMeter{ok: true, first: MachineReading{t: t0, busy: 100, self: 1},
		last: MachineReading{t: t0.Add(2 * time.Second), busy: 104, self: 1.2}}
	smp := func(cli, srv model.Figure, active bool) model.Sample {
		s := model.Sample{Active: active}
		s.Client.UserS, s.Client.SysS = cli, 0
		s.Server = &model.Process{UserS: srv, SysS: 0}
		return s
	}
	ext := model.Sample{}
	ext.Client.UserS, ext.Client.SysS = 0.3, 0.2 // an external target: no server of ours
	got := m.otherCoresBusy([]model.Sample{smp(1.0, 0.5, true), smp(0.2, 0.1, false), ext})
	// ours = 0.2 (controller) + 1.5 + 0.3 + 0.5 = 2.5; others (4 - 2.5) / 2 s.
	if got == nil || *got < 0.7499 || *got > 0.7501 {
		t.Fatalf("other cores busy %v, want 0.75", got)
	}
	m.ok = false
	if got := m.otherCoresBusy(nil); got != nil {
		t.Errorf("not measured, yet %v", *got)
	}
	if (model.Report{OtherCoresBusy: new(model.Figure(0.3))}).Noisy() != true || (model.Report{}).Noisy() {
		t.Error("Noisy: want true from a quarter core, false when not measured")
	}
}

// The controller's own cores busy is its CPU between the meter's first
// and last readings over their wall time; nil before a start, or where
// getrusage gave nothing.
func TestControllerCoresBusy(t *testing.T) {
	t0 := time.Now()
	m := machineMeter{first: MachineReading{t: t0, self: 1}, last: MachineReading{t: t0.Add(4 * time.Second), self: 1.02}}
	if got := m.ownCoresBusy(); got == nil || *got < 0.00499 || *got > 0.00501 {
		t.Fatalf("controller cores busy %v, want 0.005", got)
	}
	if got := (&machineMeter{}).ownCoresBusy(); got != nil {
		t.Errorf("not started, yet %v", *got)
	}
	m.first.self, m.last.self = 0, 0
	if got := m.ownCoresBusy(); got != nil {
		t.Errorf("getrusage gave nothing, yet %v", *got)
	}
}
