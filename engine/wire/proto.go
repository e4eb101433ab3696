// Package wire is the protocol between the controller (engine) and its
// children (engine/child): the same binary in an internal role, talked to
// over its stdin and stdout, one JSON object per line: commands down
// (Cmd), replies and reports up (Msg), each role's start spec (ServerSpec,
// LoadSpec) and the counters a child reports. Stderr is kept for crash
// reports. Both ends import it; neither imports the other. The process
// plumbing under it is engine/childproc.
package wire

import (
	"nbdscope/engine/childproc"
	"nbdscope/model"
	"nbdscope/nbd"
)

// ChildCommand is the hidden subcommand a child runs as:
// `nbdscope __child server|load SPEC` (RoleServer, RoleLoad).
const ChildCommand = childproc.Command

// Cmd is a command from the controller.
//
// A set carries one setting (a name of the settings table, model) and
// its value as the child applies it, resolved by the controller from the
// typed Value: never text to parse again. Its one JSON form is
//
//	{"op":"set","seq":7,"setting":"client-sndbuf","int":2097152}
//	{"op":"set","seq":8,"setting":"workload","str":"write"}
//
// int: a buffer as its setsockopt request in bytes (0 = the OS default;
// macos is already the platform's request for an effective 8 KiB), a count
// or a size in bytes, hash threads resolved from auto, a flag as 1 or 0.
// str: an enum's name. Absent is 0 or "". The child looks the setting up in
// the same table, checks the argument against its bounds or choices, and
// calls the entry's apply function.
type Cmd struct {
	Op      string `json:"op"` // "poll", "set", "get", "measure", "stop"
	Seq     uint64 `json:"seq"`
	Setting string `json:"setting,omitempty"`
	Int     int    `json:"int,omitempty"`
	Str     string `json:"str,omitempty"`
	// measure (load): send Requests requests, then stop and answer, or
	// give up after LimitMs (engine/child's budget.go).
	Requests int64 `json:"requests,omitempty"`
	LimitMs  int64 `json:"limit_ms,omitempty"`
}

// OpMeasure is the load's measurement of a fixed number of requests.
const OpMeasure = "measure"

// OpPeer tells a server child attached to a local --target's server which
// process is our load (Int: its PID): only the server's sockets connected
// to it are followed and changed, not its other clients'.
const OpPeer = "peer"

// OpIdle tells an exec side's load how many of its client's runs in a
// row moved no payload, as the side's server counted it (Int; 0 once one
// did): the load backs off its restarts, and at IdleRunLimit it fails
// the side with what the client did.
const OpIdle = "idle"

// IdleRunLimit is how many client runs in a row may move no payload
// before the side fails: a client that exits at once ('true {uri}') or
// never connects is not a measurement, and restarted in a tight loop it
// kept 0.65 cores busy.
const IdleRunLimit = 3

// SetCmd is the set command for a setting and its child argument.
func SetCmd(st *model.Setting, a model.ChildArg) Cmd {
	return Cmd{Op: "set", Setting: st.Name, Int: a.Int, Str: a.Str}
}

// Msg is a message from a child.
type Msg struct {
	Type string `json:"type"` // "ready", "reply", "error", "fatal" (the role failed; the child exits)
	Seq  uint64 `json:"seq,omitempty"`
	Err  string `json:"err,omitempty"`

	// ready (server): the URI clients use.
	URI string `json:"uri,omitempty"`
	// RealPID (a real server's ready): the real server's process id, so
	// the controller holds it where the placement says, as it holds the
	// child.
	RealPID int `json:"real_pid,omitempty"`
	// BufsNA (an attached --target server's ready): why its buffers are
	// left as they are (a refusal's reason); "": they follow the side's.
	BufsNA *model.Reason `json:"bufs_na,omitempty"`
	// Reached (a real server's set reply): how many of its sockets the
	// change reached. OwnSndBuf and OwnRcvBuf (its poll replies): the
	// SO_SNDBUF and SO_RCVBUF the process had set itself when its first
	// socket was seen (0: unknown).
	Reached   int `json:"reached,omitempty"`
	OwnSndBuf int `json:"own_sndbuf,omitempty"`
	OwnRcvBuf int `json:"own_rcvbuf,omitempty"`

	// poll replies: cumulative counters.
	Counters model.Counters       `json:"counters"`
	Bytes    uint64               `json:"bytes,omitempty"`      // load: payload completed
	Ops      uint64               `json:"ops,omitempty"`        // load: requests completed
	ActiveNs int64                `json:"active_ns,omitempty"`  // load: time not paused
	Warming  bool                 `json:"warming,omitempty"`    // load: resumed, its buffers still warming (slot.warm)
	Hist     Hist                 `json:"hist,omitempty"`       // load: latency buckets (sparse on the wire)
	MaxLatNs int64                `json:"max_lat_ns,omitempty"` // load: longest request completed since the last poll
	Consumed *model.ConsumeCounts `json:"consumed,omitempty"`   // load: what the consume mode found
	Errors   uint64               `json:"errors,omitempty"`
	LastErr  string               `json:"last_err,omitempty"`
	Conns    int                  `json:"conns"`
	// Accepted (our server): the connections it has accepted so far.
	// With Conns it changes whenever a data connection comes or goes, so
	// the controller looks for the side's connections again only then
	// (engine/filllook.go).
	Accepted uint64    `json:"accepted,omitempty"`
	ExecRuns []float64 `json:"exec_runs,omitempty"` // exec load: seconds of the runs finished since the last poll
	// ExecRunsActive are those runs' seconds not paused (alternate turns
	// stop the client between them): what a run's payload took.
	ExecRunsActive []float64    `json:"exec_runs_active,omitempty"`
	Payload        *nbd.Payload `json:"payload,omitempty"` // server: READ/WRITE data moved
	SndBuf         int          `json:"sndbuf,omitempty"`  // effective SO_SNDBUF of the data sockets
	RcvBuf         int          `json:"rcvbuf,omitempty"`
	// ClockCPU (our load): the CPU the process spent while its active
	// clock ran, read at the clock's own starts and stops, so that it and
	// ActiveNs cover the same moments: warming the buffers before a
	// resume, or answering polls while paused, falls outside both.
	ClockCPU *CPU `json:"clock_cpu,omitempty"`
	// SndBufLocked: that socket's SO_SNDBUF was set, so on TCP it no
	// longer autotunes (nbd.Conn.BufferLocked).
	SndBufLocked bool `json:"sndbuf_locked,omitempty"`
	// CallsCounted (an exec load, a real server): Counters.IO holds the
	// real process's socket calls, counted exactly (probe/syscount).
	// When it is false for a real process, CallsNA says why they cannot be
	// counted, with the command that lifts it.
	CallsCounted bool          `json:"calls_counted,omitempty"`
	CallsNA      *model.Reason `json:"calls_na,omitempty"`
	// Lost (load): why the connection to the target was lost; the load
	// is failing and about to exit (engine/child's load_lost.go).
	Lost string `json:"lost,omitempty"`

	// set replies
	Effective int `json:"effective,omitempty"`
	// Reconnect (server): the OS default was asked for, and open TCP
	// sockets keep a locked buffer until the load re-opens them.
	Reconnect bool `json:"reconnect,omitempty"`
	// Reconnected (load): its connections were re-opened, so their
	// sockets start from the OS default again.
	Reconnected bool `json:"reconnected,omitempty"`

	// Measured answers a measure: what its requests moved, and when.
	Measured *MeasuredMsg `json:"measured,omitempty"`

	// get replies: the settings the child is running with, by setting
	// name, as the child holds them (a buffer as its request in bytes, 0
	// for the OS default; sizes and counts in decimal).
	Settings map[string]string `json:"settings,omitempty"`
}

// MeasuredMsg answers a measure command: what the budget's requests moved
// and the wall time from the first request sent to the last reply taken.
type MeasuredMsg struct {
	Requests int64  `json:"requests"`   // let through (the budget)
	Ops      uint64 `json:"ops"`        // completed without error
	Bytes    uint64 `json:"bytes"`      // payload of those
	Errors   uint64 `json:"errors"`     // failed
	LastErr  string `json:"last_err"`   // the last failure's text
	WallNs   int64  `json:"wall_ns"`    // first request let in … last reply taken
	MaxLatNs int64  `json:"max_lat_ns"` // the longest of the requests
}

// Start is a child's start values of the settings table's entries that
// start in its role (Setting.StartsIn), by setting name, each as the child
// applies it (Setting.ChildArg): a buffer as its request in bytes, hash
// threads resolved. It is built by walking the table (StartOf), so a new
// setting reaches its child with no field here.
type Start map[string]model.ChildArg

// StartOf is the start values of role's settings for side sc, resolved
// against env.
func StartOf(role string, sc model.SideConfig, env model.ArgEnv) Start {
	s := Start{}
	for _, st := range model.Settings() {
		if st.StartsIn() == role {
			s[st.Name] = st.ChildArg(sc.Value(st), sc, env)
		}
	}
	return s
}

// Int is a start value's number (0 when not given).
func (s Start) Int(setting string) int { return s[setting].Int }

// Str is a start value's text ("" when not given).
func (s Start) Str(setting string) string { return s[setting].Str }

// ServerSpec configures a server child: its socket (for the unix
// transport) and the start values of the server's settings (backend,
// size, transport, sndbuf, and the real server command, if any).
type ServerSpec struct {
	Socket   string `json:"socket,omitempty"` // unix
	Settings Start  `json:"settings"`
	// AttachPID, when set, makes the child measure the running server
	// with that PID, serving Target (a local --target), instead of
	// starting one (engine/child's realattach.go); it is never stopped.
	AttachPID int    `json:"attach_pid,omitempty"`
	Target    string `json:"target,omitempty"`
	// RunDir is the pair's socket directory: a real server's child gives
	// up its start once it is gone (Pair.Stop removes it first), rather
	// than wait out the server's listen timeout.
	RunDir string `json:"run_dir,omitempty"`
}

// NewServerSpec is the server spec of side sc on socket.
func NewServerSpec(sc model.SideConfig, socket string) ServerSpec {
	return ServerSpec{Socket: socket, Settings: StartOf(model.RoleServer, sc, model.ArgEnv{})}
}

// Command is the real server program the child runs instead of ours
// (engine/child's realserver.go); "" for ours, whose backend applies.
func (s ServerSpec) Command() string { return s.Settings.Str(model.SetServer) }

// LoadSpec configures a load child: the target, whether it starts paused
// and verifies data, and the start values of the load's settings. With
// the exec setting given, the load is a real client command run in a loop
// (engine/child's exec.go) and the other settings do not apply.
type LoadSpec struct {
	URI      string `json:"uri"`
	Verify   bool   `json:"verify"`
	Paused   bool   `json:"paused"`
	Settings Start  `json:"settings"`
}

// NewLoadSpec is the load spec of side sc against uri, resolved against
// env (hash threads: the pair's mode and cores).
func NewLoadSpec(sc model.SideConfig, uri string, env model.ArgEnv) LoadSpec {
	return LoadSpec{URI: uri, Verify: sc.Verify, Settings: StartOf(model.RoleLoad, sc, env)}
}

// Exec is the real client command of an exec side ("" for our load).
func (s LoadSpec) Exec() string { return s.Settings.Str(model.SetExec) }
