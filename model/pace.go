package model

import (
	"encoding/json"
	"strings"
)

// What set the pace of a measurement. A bigger send buffer removes the
// time client and server spend waiting for each other; it cannot remove
// the work either does. Once a process uses all of the CPU it is held to,
// its own work is the pace, and no buffer makes the measurement faster.
// That is why the same sweep gains 2.28x on one machine and 1.3x on
// another (a small VM where the client's copy out of the socket fills its
// core): the sweep says which it was instead of leaving the user to guess.

// PaceBound names what used all of its CPU.
const (
	BoundClient = "client" // the client used all of its core(s)
	BoundServer = "server" // the server did
	BoundCore   = "core"   // placed shared: the two together filled their one core
	BoundNone   = ""       // neither did (they waited on each other), or unknown
)

// PaceFull is the share of a process's CPUs that counts as all of them:
// scheduling, the measuring itself and start-up keep a busy process a few
// percent short of 1.0.
const PaceFull = 0.9

// Pace is the CPU each process of a measurement used, in cores busy (CPU
// seconds over wall seconds), against the cores it was held to.
type Pace struct {
	Client Figure `json:"client_cores_busy"` // unknown when not measured
	Server Figure `json:"server_cores_busy"` // unknown without a server of ours
	// ClientCores and ServerCores are how many CPUs each was held to; 0
	// when not held (placement os), and then no bound is claimed.
	ClientCores int `json:"client_cores"`
	ServerCores int `json:"server_cores"`
	// Bound is what used all of its CPU: client, server, core (placed
	// shared: the two together) or "" (neither, or not claimed).
	Bound string `json:"bound"`
	// Fill and Flow are the span's send-buffer fill and which way its
	// data went: who waited on whom (fillverdict.go); not kept in JSON.
	Fill Fill `json:"-"`
	Flow Flow `json:"-"`
	// ClientWaiting and ServerWaiting are the share of the span each
	// one's lead thread waited on a run queue for a CPU
	// (Process.LeadWaiting; in runs saved before it was kept, all its
	// threads' wait, CoresWaiting): the contention rule's figures
	// (Verdict.Contended), not kept in JSON (the processes' figures
	// are). Unknown when not measured.
	ClientWaiting Figure `json:"-"`
	ServerWaiting Figure `json:"-"`
	// ClientLead and ServerLead say each wait is its lead thread's.
	ClientLead, ServerLead bool `json:"-"`
}

// PaceOf is the pace of one measurement, from its figures and where its
// processes ran.
func PaceOf(f Figures) Pace {
	p := Pace{Client: f.Client.CoresBusy, Server: Unknown, Fill: f.Fill(), Flow: f.Direction(),
		ClientWaiting: f.Client.workWaiting(), ServerWaiting: Unknown, ClientLead: f.Client.LeadWaiting.Known()}
	if f.Server != nil {
		p.Server, p.ServerWaiting, p.ServerLead = f.Server.CoresBusy, f.Server.workWaiting(), f.Server.LeadWaiting.Known()
	}
	if f.Placement.Setting == PlaceOS || f.Placement.Setting == "" {
		return p
	}
	p.ClientCores, p.ServerCores = countCPUs(f.Placement.LoadCPUs), countCPUs(f.Placement.ServerCPUs)
	switch {
	case !p.Client.Known() || p.ClientCores == 0:
	case f.Placement.LoadCPUs == f.Placement.ServerCPUs:
		if p.Server.Known() && float64(p.Client+p.Server) >= PaceFull*float64(p.ClientCores) {
			p.Bound = BoundCore
		}
	case float64(p.Client) >= PaceFull*float64(p.ClientCores):
		p.Bound = BoundClient
	case p.Server.Known() && p.ServerCores > 0 && float64(p.Server) >= PaceFull*float64(p.ServerCores):
		p.Bound = BoundServer
	}
	return p
}

// countCPUs counts a CPU list as CPUList writes it ("1", "0,1"); "any"
// or "" (not held) is 0.
func countCPUs(list string) int {
	if list == "" || list == "any" {
		return 0
	}
	return strings.Count(list, ",") + 1
}

// Pace is the pace of a sweep row's median measurement.
func (r SweepRow) Pace() Pace {
	f := r.Figures
	if f.Placement.Setting == "" {
		f.Placement = r.Placement
	}
	return PaceOf(f)
}

// UnmarshalJSON reads a pace; figures missing from the input (a sweep saved
// before the pace was kept) are unknown, never 0.
func (p *Pace) UnmarshalJSON(b []byte) error {
	type plain Pace
	v := plain{Client: Unknown, Server: Unknown, ClientWaiting: Unknown, ServerWaiting: Unknown}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Pace(v)
	return nil
}

// workWaiting is the process's wait for a CPU as the contention rule
// reads it: its lead thread's, or, in a run saved before that was kept,
// all its threads'.
func (p Process) workWaiting() Figure {
	if p.LeadWaiting.Known() {
		return p.LeadWaiting
	}
	return p.CoresWaiting
}
