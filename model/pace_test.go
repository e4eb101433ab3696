package model

import (
	"encoding/json"
	"testing"
)

// TestPaceOf: a process that used 90% or more of the CPUs it was held to
// sets the pace; on a shared core the two together do; nothing is claimed
// for processes the scheduler placed or for a CPU figure not measured.
func TestPaceOf(t *testing.T) {
	fig := func(client, server Figure, load, srv string, setting Place) Figures {
		f := Figures{Placement: Placement{Setting: setting, LoadCPUs: load, ServerCPUs: srv}}
		f.Client.CoresBusy = client
		if server.Known() {
			f.Server = &Process{CoresBusy: server}
		}
		return f
	}
	for _, c := range []struct {
		name  string
		f     Figures
		bound string
		cores int
	}{
		{"client full", fig(0.95, 0.5, "0", "1", PlaceSplit), BoundClient, 1},
		{"client just short", fig(0.89, 0.5, "0", "1", PlaceSplit), BoundNone, 1},
		{"server full", fig(0.5, 0.92, "0", "1", PlaceSplit), BoundServer, 1},
		{"client on two cpus, one busy", fig(1.2, 0.3, "0,2", "1", PlaceSplit), BoundNone, 2},
		{"shared core full", fig(0.6, 0.35, "0", "0", PlaceShared), BoundCore, 1},
		{"external target: no server", fig(0.95, Unknown, "0", "1", PlaceSplit), BoundClient, 1},
		{"os placement", fig(1.0, 1.0, "any", "any", PlaceOS), BoundNone, 0},
		{"client not measured", fig(Unknown, 1.0, "0", "1", PlaceSplit), BoundNone, 1},
	} {
		p := PaceOf(c.f)
		if p.Bound != c.bound || p.ClientCores != c.cores {
			t.Errorf("%s: bound %q with %d client cores, want %q with %d", c.name, p.Bound, p.ClientCores, c.bound, c.cores)
		}
	}
	// A sweep row of our load carries its placement beside its figures.
	r := SweepRow{Placement: Placement{Setting: PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}}
	r.Figures.Client.CoresBusy = 0.99
	if p := r.Pace(); p.Bound != BoundClient {
		t.Errorf("row pace %+v, want the client", p)
	}
}

// An optimum saved before the pace was kept reads back without one, and a
// pace without its figures reads them as unknown, not as 0 cores busy.
func TestPaceJSONMissing(t *testing.T) {
	var o SweepOptimum
	if err := json.Unmarshal([]byte(`{"buffer":"2m","throughput_bps":1}`), &o); err != nil {
		t.Fatal(err)
	}
	if o.Pace != nil {
		t.Errorf("pace of an old optimum: %+v, want none", *o.Pace)
	}
	var p Pace
	if err := json.Unmarshal([]byte(`{"bound":""}`), &p); err != nil || p.Client.Known() || p.Server.Known() {
		t.Errorf("a pace without figures: %+v (%v), want them unknown", p, err)
	}
	b, err := json.Marshal(Pace{Client: 0.98, Server: Unknown, ClientCores: 1, ServerCores: 1, Bound: BoundClient})
	if err != nil || string(b) != `{"client_cores_busy":0.98,"server_cores_busy":null,"client_cores":1,"server_cores":1,"bound":"client"}` {
		t.Errorf("pace JSON %s, %v", b, err)
	}
}
