package child

import (
	"os"
	"runtime"
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform"
)

// TestResumeFollowsThePinning: a load pinned to one CPU after it started,
// as the controller pins its children, runs on one processor from its
// resume or measurement (a sweep's, calibrate's) on, not from the
// runtime's own check up to a second later: the ppoll reader keeps the
// runtime asleep only on one processor.
func TestResumeFollowsThePinning(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set: the user's value wins")
	}
	cpus := platform.AllowedCPUs()
	if len(cpus) < 2 {
		t.Skip("one CPU allowed: there is nothing to narrow")
	}
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	for _, start := range []struct {
		name string
		run  func(r *loadRole) wire.Msg
	}{
		{"resume", func(r *loadRole) wire.Msg { return r.setPaused(wire.Cmd{Int: 0}) }},
		{"measure", func(r *loadRole) wire.Msg { return r.measure(wire.Cmd{Requests: 4, LimitMs: 30_000}) }},
	} {
		t.Run(start.name, func(t *testing.T) {
			t.Cleanup(func() {
				if err := platform.PinProcess(os.Getpid(), cpus); err != nil {
					t.Error(err)
				}
			})
			runtime.SetDefaultGOMAXPROCS() // the runtime's own choice, as in a child
			uri := serveBackend(t, nbd.NewNull(1<<30, 0xff))
			r := startLoad(t, wire.LoadSpec{URI: uri, Paused: true, Settings: wire.Start{model.SetConnections: {Int: 1}, model.SetRequestSize: {Int: 4 << 10},
				model.SetInFlight: {Int: 1}, model.SetWorkload: {Str: string(model.WorkRead)}, model.SetConsume: {Str: string(model.ConsumeNone)}}})
			if n := runtime.GOMAXPROCS(0); n < 2 {
				t.Fatalf("%d processors before the pinning, on %d CPUs", n, len(cpus))
			}
			if err := platform.PinProcess(os.Getpid(), cpus[:1]); err != nil {
				t.Fatal(err)
			}
			if m := start.run(r); m.Err != "" {
				t.Fatal(m.Err)
			}
			if n := runtime.GOMAXPROCS(0); n != 1 {
				t.Errorf("%s on one CPU with %d processors, want 1", start.name, n)
			}
		})
	}
}
