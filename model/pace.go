package model

import (
	"encoding/json"
	"fmt"
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

// paceFull is the share of a process's CPUs that counts as all of them:
// scheduling, the measuring itself and start-up keep a busy process a few
// percent short of 1.0.
const paceFull = 0.9

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
	// data went: who waited on whom (fillwords.go); not kept in JSON.
	Fill Fill `json:"-"`
	Flow Flow `json:"-"`
	// ClientWaiting and ServerWaiting are the cores each waited on a run
	// queue for a CPU (Process.CoresWaiting): the contention rule's
	// figures (Verdict.Contended), not kept in JSON (the processes'
	// figures are). Unknown when not measured.
	ClientWaiting Figure `json:"-"`
	ServerWaiting Figure `json:"-"`
}

// PaceOf is the pace of one measurement, from its figures and where its
// processes ran.
func PaceOf(f Figures) Pace {
	p := Pace{Client: f.Client.CoresBusy, Server: Unknown, Fill: f.Fill(), Flow: f.Direction(),
		ClientWaiting: f.Client.CoresWaiting, ServerWaiting: Unknown}
	if f.Server != nil {
		p.Server, p.ServerWaiting = f.Server.CoresBusy, f.Server.CoresWaiting
	}
	if f.Placement.Setting == PlaceOS || f.Placement.Setting == "" {
		return p
	}
	p.ClientCores, p.ServerCores = countCPUs(f.Placement.LoadCPUs), countCPUs(f.Placement.ServerCPUs)
	switch {
	case !p.Client.Known() || p.ClientCores == 0:
	case f.Placement.LoadCPUs == f.Placement.ServerCPUs:
		if p.Server.Known() && float64(p.Client+p.Server) >= paceFull*float64(p.ClientCores) {
			p.Bound = BoundCore
		}
	case float64(p.Client) >= paceFull*float64(p.ClientCores):
		p.Bound = BoundClient
	case p.Server.Known() && p.ServerCores > 0 && float64(p.Server) >= paceFull*float64(p.ServerCores):
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

// PaceText is the words for a pace, shared by a sweep's line and a run's:
// the process that used all of the cores it was held to, with its cores
// busy (CPU seconds per second of load: the drain after a turn can put
// it a little over the cores it had), or that neither did; with the same
// figure under the default buffer when def is given ("0.86 at default"),
// and faultNote for the client.
func PaceText(p Pace, def *Pace, clientFaults Figure) string {
	return VerdictOfPace(p).Text(def, clientFaults)
}

// coresText is PaceText's words for the cores busy.
func coresText(p Pace, def *Pace, clientFaults Figure) string {
	atDefault := func(pick func(Pace) Figure) string {
		if def == nil || !pick(*def).Known() {
			return ""
		}
		return pick(*def).Fixed(2) + " at default"
	}
	// full is "(0.98 cores busy; 0.86 at default)", part "0.88 (0.77 at
	// default)": the figure of a process that filled its core, and of one
	// that did not.
	full := func(v Figure, pick func(Pace) Figure) string {
		if d := atDefault(pick); d != "" {
			return "(" + v.Fixed(2) + " cores busy; " + d + ")"
		}
		return "(" + v.Fixed(2) + " cores busy)"
	}
	part := func(v Figure, pick func(Pace) Figure) string {
		if d := atDefault(pick); d != "" {
			return v.Fixed(2) + " (" + d + ")"
		}
		return v.Fixed(2)
	}
	client := func(q Pace) Figure { return q.Client }
	server := func(q Pace) Figure { return q.Server }
	both := func(q Pace) Figure { return q.Client + q.Server }
	const notWaiting = ": its own work, not waiting, sets the pace here"
	switch p.Bound {
	case BoundClient:
		return fmt.Sprintf("the client used all of its %s %s%s%s", cores(p.ClientCores), full(p.Client, client), notWaiting, faultNote(clientFaults))
	case BoundServer:
		return fmt.Sprintf("the server used all of its %s %s%s", cores(p.ServerCores), full(p.Server, server), notWaiting)
	case BoundCore:
		return fmt.Sprintf("client and server together used all of the %s they share %s: their work, not waiting, sets the pace here",
			cores(p.ClientCores), full(p.Client+p.Server, both))
	}
	busy := fmt.Sprintf("client %s, server %s cores busy", part(p.Client, client), part(p.Server, server))
	if p.ClientCores == 0 {
		return busy + " (not held to cores, so no bound is claimed)"
	}
	return busy + ": neither used all of its CPU; the rest of the time they waited on each other"
}

// faultsFresh is the client's page faults per 2 MiB from which it is said
// to fault its buffers in afresh: an eighth of the 512 pages a 2 MiB
// payload fills. A client that reuses its buffers takes a handful.
const faultsFresh = 64

// faultNote adds, for a client that faults its buffers in afresh, that
// this may be its work: where a fault is dear (a VM that backs memory
// lazily: 10-16 µs here) it alone can set the pace.
func faultNote(faults Figure) string {
	if !faults.Known() || faults < faultsFresh {
		return ""
	}
	return fmt.Sprintf("; it took %s page faults per 2 MiB, faulting its buffers in afresh, and where a fault is dear (a VM) that can be most of its work",
		faults.Fixed(0))
}

// cores is "1 core", "2 cores".
func cores(n int) string {
	if n == 1 {
		return "1 core"
	}
	return fmt.Sprintf("%d cores", n)
}
