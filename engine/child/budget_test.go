package child

import (
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// TestMeasureSendsItsBudget: a measurement sends exactly its budget of
// requests, however many are in flight, and the load sends nothing after
// it: the gate closes itself behind the last request. A second
// measurement on the same load does the same, and a budget that is not a
// multiple of the requests in flight is still exact.
func TestMeasureSendsItsBudget(t *testing.T) {
	const req = 64 << 10
	uri := serveBackend(t, nbd.NewNull(1<<30, 0))
	r := startLoad(t, wire.LoadSpec{URI: uri, Paused: true, Settings: wire.Start{model.SetConnections: {Int: 2},
		model.SetRequestSize: {Int: req}, model.SetInFlight: {Int: 4}, model.SetWorkload: {Str: string(model.WorkRead)}, model.SetConsume: {Str: string(model.ConsumeNone)}}})
	for _, n := range []int64{8, 37, 200} {
		before := r.poll()
		m := r.handle(wire.Cmd{Op: wire.OpMeasure, Requests: n, LimitMs: 60_000})
		if m.Type == "error" || m.Measured == nil {
			t.Fatalf("measure %d: %+v", n, m)
		}
		got := m.Measured
		if got.Ops != uint64(n) || got.Bytes != uint64(n)*req || got.Errors != 0 || got.WallNs <= 0 {
			t.Errorf("measure %d: %+v; want %d ops, %d bytes, no errors, a wall time", n, *got, n, n*req)
		}
		// What the load's own counters say matches, and nothing went out
		// after the last request: the gate closed behind it.
		after := r.poll()
		if d := after.Ops - before.Ops; d != uint64(n) {
			t.Errorf("measure %d: the load completed %d requests", n, d)
		}
		if again := r.poll(); again.Ops != after.Ops {
			t.Errorf("measure %d: %d more requests after the measurement ended", n, again.Ops-after.Ops)
		}
		if !r.gate.paused || r.gate.bud.on {
			t.Errorf("measure %d: gate paused %v, budget on %v after it", n, r.gate.paused, r.gate.bud.on)
		}
	}
	// A load that runs is not measured: its requests would mix in.
	r.gate.setPaused(false)
	if m := r.handle(wire.Cmd{Op: wire.OpMeasure, Requests: 8, LimitMs: 60_000}); m.Type != "error" {
		t.Errorf("measure of a running load: %+v, want an error", m)
	}
}
