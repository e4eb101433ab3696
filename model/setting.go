package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"nbdscope/nbd"
	"nbdscope/units"
)

// The settings table (after fio's options.c): one entry per setting, with
// its name, help, type, bounds, where it applies, how the explorer steps it
// and how it formats. The command line (--X, --X-a, --X-b), --at, preset
// files, the explorer's keys and labels, Pair.Apply's routing and both
// children's set handlers all work off this table and nothing else.
//
// Text is parsed once, at the edge (a flag, a key, --at, a preset file), by
// Setting.Parse; from then on a Change carries the typed Value.
//
// How to add a setting:
//  1. Add its field to SideConfig (or Config, for a pair-wide one) and its
//     check to Validate.
//  2. Add one entry to newSettingTable below: name, help, type and
//     bounds, where it applies (Where), its field (bufField, intField,
//     strField: where the value is kept) and — to be stepped from the
//     explorer — its keys and step (stepOne, stepDouble, stepCycle …).
//  3. Write its apply function where it runs: for a child setting, a
//     method of loadRole or serverRole (engine/child) taking the wire.Cmd
//     (its value arrives resolved, in Int or Str, see wire.Cmd), listed by
//     the setting's name in loadSetters or serverSetters; for a pair
//     setting, a Controller call in engine's pairSetters. A setting that
//     needs new children (AtRestart) or the controller alone (AtPlacement)
//     needs none: the engine's side.apply routes it on Where. A test fails
//     when an entry routed to a child or the pair has no apply function
//     there.
//  4. A setting applied in a child starts there too: the child's start
//     spec carries every entry that starts in its role (StartsIn: by
//     Where, or start for one that is not live in a child), built from
//     the table (wire.StartOf); the role reads it by name where it
//     starts (engine/child's startLoadRole, startServerRole). A test
//     fails when the load does not start with one of its settings.
//  5. A setting a sample is measured under (one that starts a new
//     segment when it changes) gets a field in Stamp (figures.go), tagged
//     with its name: StampOf and Stamp.Text walk the tags.
//
// Nothing else changes: the flags, their help and completion, --at, preset
// files, the explorer's keys, ? help and the routing follow the entry.

// Setting names.
const (
	SetSndBuf       = "sndbuf"
	SetClientSndBuf = "client-sndbuf"
	SetClientRcvBuf = "client-rcvbuf"
	SetServerRcvBuf = "server-rcvbuf"
	SetConnections  = "connections"
	SetRequestSize  = "request-size"
	SetInFlight     = "in-flight"
	SetWorkload     = "workload"
	SetReadPercent  = "read-percent"
	SetConsume      = "consume"
	SetHashThreads  = "hash-threads"
	SetReader       = "reader"
	SetTransport    = "transport"
	SetPlacement    = "placement"
	SetMode         = "mode"
	SetFill         = "fill-source"
	SetPaused       = "paused"
	SetTarget       = "target"
	SetExec         = "exec"
	SetServer       = "server"
	SetBackend      = "backend"
	SetSize         = "size"
)

// Type is the kind of value a setting holds.
type Type int

const (
	TypeBuf  Type = iota // a Buf: default, macos or a size (Value.Buf)
	TypeInt              // a count within [Min, Max] (Value.Int)
	TypeSize             // a byte size within [Min, Max], a multiple of Align (Value.Int)
	TypeEnum             // one of Choices (Value.Str)
	TypeBool             // on or off (Value.Bool)
	TypeText             // free text checked by the side's Validate (Value.Str)
)

// Where is where a setting takes effect; a change is routed on it alone.
type Where int

const (
	AtLoad      Where = iota // the load child, live
	AtServer                 // the server child, live
	AtRestart                // new children
	AtPlacement              // the controller re-places the processes
	AtPair                   // the pair's own state (Controller.SetMode, SetPaused)
	AtStart                  // fixed for the run: set by flags and presets only
)

// FlagScope is how a setting appears on the command line.
type FlagScope int

const (
	FlagSide FlagScope = iota // --X (both sides), --X-a, --X-b
	FlagPair                  // --X
	FlagNone                  // not a flag (changed live only)
)

// Value is a parsed setting value; the entry's Type says which field holds
// it. Values compare with ==.
type Value struct {
	Buf  Buf
	Int  int
	Str  string
	Bool bool
}

// State is what the explorer keeps settings in: the configuration, and
// each side's pause, which is the run's state rather than configuration.
// A side's settings are read and written in its SideConfig; only the
// pair's (mode, pause) need the State.
type State struct {
	Cfg    Config
	Paused [2]bool
}

// Setting is one entry of the settings table.
type Setting struct {
	Name    string
	Help    string // one line: flags, ? help, completion
	Var     string // the value's name in flag help: SIZE, N …
	Type    Type
	Min     int // TypeInt, TypeSize
	Max     int
	Align   int             // TypeSize: a multiple of this
	Choices func() []string // TypeEnum, in the order the explorer cycles them
	Where   Where
	Flag    FlagScope
	// Socket is the socket option a TypeBuf setting sets; Label names the
	// buffer for people ("client sndbuf").
	Socket nbd.SockBuf
	Label  string
	// effective reads a buffer setting's effective size from a sample.
	effective func(b Buffers) int
	// SendsFor are the workloads whose bulk data a send buffer sends (the
	// buffer keys act on it there: SenderBuffers).
	SendsFor []Workload
	// PairWide settings are the pair's, not a side's (mode).
	PairWide bool
	// Spawned settings concern the spawned server: a side that targets an
	// external server refuses a live change of them.
	Spawned bool

	// The explorer: Keys are the keys that step the value down and up (one
	// key, Keys[0], for a setting that cycles); KeyHelp labels them.
	Keys    [2]string
	KeyHelp string
	step    func(st *Setting, v Value, dir, def int) (Value, bool)

	parse  func(s string) (Value, error) // nil: by Type
	format func(v Value) string          // nil: by Type
	values func() []string               // completion values; nil: Choices

	field           // where a side's value is kept in its SideConfig
	pair  pairField // where a pair setting (AtPair) is kept in a State

	// arg is the value as the child applies it (nil: by Type).
	arg func(v Value, sc SideConfig, env ArgEnv) ChildArg
	// onlyFor are the workloads the setting applies to (nil: all).
	onlyFor []Workload
	// start is the child role whose start spec carries the setting, for
	// one that does not apply live in a child (by Where: StartsIn).
	start string
}

// StartsIn is the child role (RoleServer, RoleLoad) whose start spec
// carries the setting's value, as ChildArg resolves it; "" for none. A
// setting applied live in a child starts in that child; others say where.
func (st *Setting) StartsIn() string {
	switch {
	case st.start != "":
		return st.start
	case st.Where == AtLoad:
		return RoleLoad
	case st.Where == AtServer:
		return RoleServer
	}
	return ""
}

// ArgEnv is what a child argument may be resolved against.
type ArgEnv struct {
	Mode    Mode
	Allowed []int
}

// ChildArg is a setting's value as a child applies it (the Int and Str
// of a set command, engine/wire's Cmd).
type ChildArg struct {
	Int int    `json:"int,omitempty"`
	Str string `json:"str,omitempty"`
}

func fixedList(v ...string) func() []string { return func() []string { return v } }

var settingTable []*Setting

func init() { settingTable = newSettingTable() }

// newSettingTable builds the table (a function, so the entries may refer
// to code that looks the table up).
func newSettingTable() []*Setting {
	t := []*Setting{
		{Name: SetSndBuf, Var: "SIZE", Type: TypeBuf, Where: AtServer, Spawned: true, step: stepBuf, Socket: nbd.SendBuf,
			Label: "server sndbuf", SendsFor: []Workload{WorkRead, WorkRandRead, WorkMixed},
			effective: func(b Buffers) int { return b.ServerEffective },
			Help:      "server SO_SNDBUF: default, macos (8 KiB effective) or a size (64k, 2m)",
			field:     bufField(func(s *SideConfig) *Buf { return &s.SndBuf })},
		{Name: SetClientSndBuf, Var: "SIZE", Type: TypeBuf, Where: AtLoad, step: stepBuf, Socket: nbd.SendBuf,
			Label: "client sndbuf", SendsFor: []Workload{WorkWrite, WorkRandWrite, WorkMixed},
			effective: func(b Buffers) int { return b.ClientEffective },
			Help:      "client SO_SNDBUF: default, macos or a size", field: bufField(func(s *SideConfig) *Buf { return &s.ClientSndBuf })},
		{Name: SetClientRcvBuf, Var: "SIZE", Type: TypeBuf, Where: AtLoad, step: stepBuf, Socket: nbd.RecvBuf, Label: "client rcvbuf",
			effective: func(b Buffers) int { return b.ClientRcvEffective },
			Help:      "client SO_RCVBUF: default, macos or a size", field: bufField(func(s *SideConfig) *Buf { return &s.ClientRcvBuf })},
		{Name: SetServerRcvBuf, Var: "SIZE", Type: TypeBuf, Where: AtServer, Spawned: true, step: stepBuf, Socket: nbd.RecvBuf,
			Label: "server rcvbuf", effective: func(b Buffers) int { return b.ServerRcvEffective },
			Help:  "server SO_RCVBUF: default, macos or a size (a real server's sockets too)",
			field: bufField(func(s *SideConfig) *Buf { return &s.ServerRcvBuf })},
		{Name: SetConnections, Var: "N", Type: TypeInt, Min: MinConnections, Max: MaxConnections, Where: AtLoad,
			Help: "connections per side (1…64)", values: fixedList("1", "2", "4", "8", "16"),
			Keys: [2]string{"c", "C"}, KeyHelp: "connections −/+", step: stepOne,
			field: intField(func(s *SideConfig) *int { return &s.Connections })},
		{Name: SetRequestSize, Var: "SIZE", Type: TypeSize, Min: MinRequestSize, Max: MaxRequestSize, Align: 512, Where: AtLoad,
			Help: "request size (512 … 32m)", values: fixedList("4k", "64k", "256k", "1m", "2m", "32m"),
			Keys: [2]string{"r", "R"}, KeyHelp: "request size ½/×2", step: stepDouble,
			field: intField(func(s *SideConfig) *int { return &s.RequestSize })},
		{Name: SetInFlight, Var: "N", Type: TypeInt, Min: MinInFlight, Max: MaxInFlight, Where: AtLoad,
			Help: "requests in flight per connection (1…256)", values: fixedList("1", "4", "16", "64"),
			Keys: [2]string{"d", "D"}, KeyHelp: "in flight ½/×2", step: stepDouble,
			field: intField(func(s *SideConfig) *int { return &s.InFlight })},
		{Name: SetWorkload, Var: "WORKLOAD", Type: TypeEnum, Choices: WorkloadNames, Where: AtLoad,
			Help: "read, write, randread, randwrite or mixed",
			Keys: [2]string{"w"}, KeyHelp: "cycle workload", step: stepCycle,
			field: strField(func(s *SideConfig) *Workload { return &s.Workload }, nil)},
		{Name: SetReadPercent, Var: "PCT", Type: TypeInt, Min: 0, Max: 100, Where: AtLoad, onlyFor: []Workload{WorkMixed},
			Help:  "share of reads in the mixed workload (0…100)",
			field: intField(func(s *SideConfig) *int { return &s.ReadPercent })},
		{Name: SetConsume, Var: "HOW", Type: TypeEnum, Choices: consumeList, Where: AtLoad,
			Help:  "what the client does with read data: copy, scan (qemu-img's zero scan), hash (blksum / nbdcopy --blkhash) or none (a pure sink)",
			field: strField(func(s *SideConfig) *ConsumeMode { return &s.Consume }, func() ConsumeMode { return ConsumeNone })},
		{Name: SetHashThreads, Var: "N", Type: TypeInt, Min: 0, Max: MaxHashThreads, Where: AtLoad,
			Help:   "threads the hash consume mode digests with: auto (1, or the side's cores minus one when placed split) or 1…64",
			parse:  parseHashThreads,
			format: func(v Value) string { return formatHashThreads(v.Int) },
			values: fixedList("auto", "1", "2", "4"),
			arg: func(_ Value, sc SideConfig, e ArgEnv) ChildArg {
				return ChildArg{Int: ResolveHashThreads(sc, e.Mode, e.Allowed)}
			},
			field: intField(func(s *SideConfig) *int { return &s.HashThreads })},
		{Name: SetReader, Var: "HOW", Type: TypeEnum, Choices: readerNames, Where: AtLoad,
			Help:  "how our load's reader waits for its socket: poll (as qemu's client: ppoll on its own thread, then read until EAGAIN; Linux) or netpoller (Go's)",
			field: strField(func(s *SideConfig) *ReaderMode { return &s.Reader }, DefaultReader)},
		{Name: SetPlacement, Var: "WHERE", Type: TypeEnum, Choices: PlacementNames, Where: AtPlacement,
			Help: "where server and load process run: split (own cores), shared (one core) or os",
			Keys: [2]string{"o"}, KeyHelp: "cores: split/shared/os", step: stepCycle,
			field: strField(func(s *SideConfig) *Place { return &s.Placement }, DefaultPlacement)},
		{Name: SetTransport, Var: "unix|tcp", Type: TypeEnum, Choices: func() []string { return names(Transports) }, Where: AtRestart, Spawned: true, start: RoleServer,
			Help: "unix or tcp", Keys: [2]string{"t"}, KeyHelp: "unix/tcp", step: stepCycle,
			field: strField(func(s *SideConfig) *Transport { return &s.Transport }, nil)},
		{Name: SetTarget, Var: "URI", Type: TypeText, Where: AtStart,
			Help: "an NBD URI to load instead of a spawned server", field: strField(func(s *SideConfig) *string { return &s.Target }, nil)},
		{Name: SetExec, Var: "CMD", Type: TypeText, Where: AtRestart, Spawned: true, start: RoleLoad,
			Help:  "a real client command run in a loop as the side's load ({uri}, {socket}, {size} replaced; no shell); empty for our load",
			field: strField(func(s *SideConfig) *string { return &s.Exec }, nil)},
		{Name: SetServer, Var: "CMD", Type: TypeText, Where: AtRestart, Spawned: true, start: RoleServer,
			Help:  "a real server command that serves the side instead of ours ({socket}, {port}, {size} replaced; no shell); empty for ours",
			field: strField(func(s *SideConfig) *string { return &s.Server }, nil)},
		{Name: SetBackend, Var: "BACKEND", Type: TypeText, Where: AtStart, start: RoleServer,
			Help: "spawned server backend: null, pattern, memory or file:PATH", values: fixedList("null", "pattern", "memory", "file:"),
			field: strField(func(s *SideConfig) *string { return &s.Backend }, nil)},
		{Name: SetSize, Var: "SIZE", Type: TypeSize, Min: 512, Max: math.MaxInt, Align: 512, Where: AtStart, start: RoleServer,
			Help:  "spawned server export size (e.g. 64g, the default; 1g for a real client against a real server)",
			field: field{func(s *SideConfig) Value { return Value{Int: int(s.Size)} }, func(s *SideConfig, v Value) { s.Size = int64(v.Int) }}},
	}
	return append(t, pairSettings()...)
}

// pairSettings are the table's pair-wide entries: the run's mode and fill
// source, and a side's pause, set for the pair rather than in a side's
// config.
func pairSettings() []*Setting {
	return []*Setting{
		{Name: SetMode, Var: "MODE", Type: TypeEnum, Choices: func() []string { return names(Modes) }, Where: AtPair, Flag: FlagPair, PairWide: true,
			Help: "run mode: alternate or concurrent (default: alternate below 4 cores)",
			Keys: [2]string{"m"}, KeyHelp: "alternate/concurrent", step: stepCycle,
			pair: pairField{func(s *State, _ int) Value { return Value{Str: string(s.Cfg.Mode)} }, func(s *State, _ int, v Value) { s.Cfg.Mode = Mode(v.Str) }}},
		{Name: SetFill, Var: "SOURCE", Type: TypeEnum, Choices: func() []string { return []string{FillSourceKernel, FillSourceEvents, FillSourceSampler} },
			Where: AtStart, Flag: FlagPair, PairWide: true,
			Help: "what measures the send-buffer fill: kernel (the default: BPF on a timer reads each unix sender's level 1000 times a second, " +
				"a cost that does not grow with the data; the sampler measures what it cannot), kernel-events (BPF at every change of the buffer, exact, " +
				"but about 600 ns at every skb charged and freed: the pair ran 0.88-0.99x as fast at a 2 MiB buffer) or sampler (sock_diag from user space, 100 times a second: docs/figures.md)",
			pair: pairField{func(s *State, _ int) Value { return Value{Str: s.Cfg.FillSource()} }, func(s *State, _ int, v Value) { s.Cfg.Fill = v.Str }}},
		{Name: SetPaused, Type: TypeBool, Where: AtPair, Flag: FlagNone,
			Help: "pause or resume a side's load", Keys: [2]string{" "}, KeyHelp: "pause/resume side", step: stepToggle,
			pair: pairField{func(s *State, i int) Value { return Value{Bool: s.Paused[i]} }, func(s *State, i int, v Value) { s.Paused[i] = v.Bool }}},
	}
}

// field is where a side setting's value is kept in its SideConfig.
type field struct {
	get func(s *SideConfig) Value
	put func(s *SideConfig, v Value)
}

// pairField is where a pair setting's value is kept: the configuration's
// mode, a side's pause.
type pairField struct {
	get func(s *State, side int) Value
	put func(s *State, side int, v Value)
}

// Fields of a side's configuration, by type.
func bufField(f func(*SideConfig) *Buf) field {
	return field{func(s *SideConfig) Value { return Value{Buf: *f(s)} }, func(s *SideConfig, v Value) { *f(s) = v.Buf }}
}

func intField(f func(*SideConfig) *int) field {
	return field{func(s *SideConfig) Value { return Value{Int: *f(s)} }, func(s *SideConfig, v Value) { *f(s) = v.Int }}
}

// strField reads an empty field as def() when def is set (consume,
// placement: files written before they existed).
func strField[T ~string](f func(*SideConfig) *T, def func() T) field {
	return field{func(s *SideConfig) Value {
		if v := *f(s); v != "" || def == nil {
			return Value{Str: string(v)}
		}
		return Value{Str: string(def())}
	}, func(s *SideConfig, v Value) { *f(s) = T(v.Str) }}
}

// Settings returns the table, in the order help lists it. The entries are
// shared: read them, don't change them.
func Settings() []*Setting { return settingTable }

// Lookup finds a setting by name.
func Lookup(name string) (*Setting, bool) {
	for _, s := range settingTable {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// LookupSetting is Lookup with the error every edge reports.
func LookupSetting(name string) (*Setting, error) {
	if s, ok := Lookup(name); ok {
		return s, nil
	}
	return nil, fmt.Errorf("unknown setting %q", name)
}

// PerSide reports whether each side has the setting (not the pair).
func (st *Setting) PerSide() bool { return !st.PairWide }

// InSideConfig reports whether the setting is kept in SideConfig (all but
// mode and the pause, which are the pair's and the turns').
func (st *Setting) InSideConfig() bool { return st.Where != AtPair }

// Live reports whether the setting can change while the load runs.
func (st *Setting) Live() bool { return st.Where != AtStart }

// Values are the values the command line completes and help offers.
func (st *Setting) Values() []string {
	switch {
	case st.values != nil:
		return st.values()
	case st.Choices != nil:
		return st.Choices()
	case st.Type == TypeBuf:
		return append([]string{"macos"}, BufLadder...)
	case st.Type == TypeBool:
		return []string{"false", "true"}
	}
	return nil
}

// Parse reads a value from its text form and checks it against the type
// and bounds (not against the rest of the side: Apply does that).
func (st *Setting) Parse(s string) (Value, error) {
	v, err := st.parseType(strings.TrimSpace(s))
	if err != nil {
		return Value{}, asValueError(err, st.Name, s)
	}
	return v, nil
}

func (st *Setting) parseType(s string) (Value, error) {
	if st.parse != nil {
		return st.parse(s)
	}
	switch st.Type {
	case TypeBuf:
		b, err := parseBuf(s)
		return Value{Buf: b}, err
	case TypeInt:
		n, err := strconv.Atoi(s)
		if err != nil {
			return Value{}, fmt.Errorf("want a whole number")
		}
		return Value{Int: n}, st.inBounds(n)
	case TypeSize:
		n, err := units.ParseSize(s)
		if err != nil {
			return Value{}, sizeProblem(err)
		}
		if st.Align > 1 && n%int64(st.Align) != 0 {
			return Value{}, fmt.Errorf("want a multiple of %d", st.Align)
		}
		if n < int64(st.Min) || n > int64(st.Max) {
			return Value{}, fmt.Errorf("want %s…%s", units.FormatSize(int64(st.Min)), units.FormatSize(int64(st.Max)))
		}
		return Value{Int: int(n)}, nil
	case TypeEnum:
		if !slices.Contains(st.Choices(), s) {
			return Value{}, fmt.Errorf("want one of %s", strings.Join(st.Choices(), ", "))
		}
		return Value{Str: s}, nil
	case TypeBool:
		b, err := strconv.ParseBool(s)
		return Value{Bool: b}, err
	}
	return Value{Str: s}, nil
}

func (st *Setting) inBounds(n int) error {
	if n < st.Min || n > st.Max {
		return fmt.Errorf("want %d…%d", st.Min, st.Max)
	}
	return nil
}

// Format is a value's text form: what flags, presets, events and the
// explorer show, and what Parse reads back.
func (st *Setting) Format(v Value) string {
	if st.format != nil {
		return st.format(v)
	}
	switch st.Type {
	case TypeBuf:
		return v.Buf.String()
	case TypeInt:
		return strconv.Itoa(v.Int)
	case TypeSize:
		return units.FormatSize(int64(v.Int))
	case TypeBool:
		return strconv.FormatBool(v.Bool)
	}
	return v.Str
}

// Get is the setting's value in s for side (ignored by the mode).
func (st *Setting) Get(s *State, side int) Value {
	if st.pair.get != nil {
		return st.pair.get(s, side)
	}
	return st.get(&s.Cfg.Sides[side])
}

// Put sets the setting's value in s. It checks nothing: Check does.
func (st *Setting) Put(s *State, side int, v Value) {
	if st.pair.put != nil {
		st.pair.put(s, side, v)
		return
	}
	st.put(&s.Cfg.Sides[side], v)
}

// Effective is a buffer setting's effective size in a sample's buffers
// (0: unknown, or not a buffer).
func (st *Setting) Effective(b Buffers) int {
	if st.effective == nil {
		return 0
	}
	return st.effective(b)
}

// Step is the value next to v in direction dir (+1 up, -1 down) as the
// explorer's keys step it, or false at the end of its range. A buffer
// steps from the size in effect: def is its effective size at default
// (this OS's for a fresh socket; other settings ignore it), so + at
// default goes to the first rung above what default gives, as macos
// steps from its 8 KiB; a default of unknown size (def 0) does not step.
func (st *Setting) Step(v Value, dir, def int) (Value, bool) {
	if st.step == nil {
		return v, false
	}
	return st.step(st, v, dir, def)
}

// ChildArg is v as the child applies it.
func (st *Setting) ChildArg(v Value, sc SideConfig, env ArgEnv) ChildArg {
	if st.arg != nil {
		return st.arg(v, sc, env)
	}
	switch st.Type {
	case TypeBuf:
		return ChildArg{Int: BufRequest(v.Buf)}
	case TypeInt, TypeSize:
		return ChildArg{Int: v.Int}
	case TypeBool:
		if v.Bool {
			return ChildArg{Int: 1}
		}
		return ChildArg{}
	}
	return ChildArg{Str: v.Str}
}

// CheckArg checks a child argument against the type before the child
// applies it (the controller checked the value; this guards the wire).
func (st *Setting) CheckArg(c ChildArg) error {
	switch st.Type {
	case TypeInt, TypeSize:
		if st.arg == nil && (c.Int < st.Min || c.Int > st.Max) {
			return fmt.Errorf("%s %d out of range", st.Name, c.Int)
		}
	case TypeEnum:
		if !slices.Contains(st.Choices(), c.Str) {
			return fmt.Errorf("%s %q: want one of %s", st.Name, c.Str, strings.Join(st.Choices(), ", "))
		}
	}
	return nil
}

// Steps.

func stepOne(st *Setting, v Value, dir, _ int) (Value, bool) {
	n := min(max(v.Int+dir, st.Min), st.Max)
	return Value{Int: n}, n != v.Int
}

// stepDouble halves or doubles within the bounds, keeping the alignment.
func stepDouble(st *Setting, v Value, dir, _ int) (Value, bool) {
	n := v.Int * 2
	if dir < 0 {
		n = v.Int / 2
		if st.Align > 1 {
			n -= n % st.Align
		}
	}
	n = min(max(n, st.Min), st.Max)
	return Value{Int: n}, n != v.Int
}

func stepCycle(st *Setting, v Value, _, _ int) (Value, bool) {
	c := st.Choices()
	next := c[0]
	for i, x := range c {
		if x == v.Str {
			next = c[(i+1)%len(c)]
		}
	}
	return Value{Str: next}, next != v.Str
}

func stepToggle(_ *Setting, v Value, _, _ int) (Value, bool) { return Value{Bool: !v.Bool}, true }

// stepBuf steps along BufLadder's sizes from the size in effect: a size
// from itself, macos from its 8 KiB, default from def (its effective
// size on this OS; 0: unknown, no step). A size off the ladder steps to
// the next rung. The ladder ends at its smallest and largest rung:
// stepping down never lands on default, which may be bigger (208k on
// Linux); = default goes back to it.
func stepBuf(_ *Setting, v Value, dir, def int) (Value, bool) {
	cur := def
	switch v.Buf.Kind {
	case BufMacOS:
		cur = MacOSSendBuffer
	case BufSize:
		cur = v.Buf.Bytes
	}
	if cur <= 0 {
		return v, false
	}
	rungs := make([]int, len(BufLadder)-1)
	for i, s := range BufLadder[1:] {
		n, _ := units.ParseSize(s)
		rungs[i] = int(n)
	}
	if dir > 0 {
		for _, n := range rungs {
			if n > cur {
				return Value{Buf: Buf{Kind: BufSize, Bytes: n}}, true
			}
		}
		return v, false
	}
	for i := len(rungs) - 1; i >= 0; i-- {
		if rungs[i] < cur {
			return Value{Buf: Buf{Kind: BufSize, Bytes: rungs[i]}}, true
		}
	}
	return v, false
}

// Changes.

// Change is one live (or scripted) change of a setting: of a side, or of
// the pair (mode; Side is then ignored).
type Change struct {
	At   Duration // for scripted changes
	Side int      // 0 = A, 1 = B
	// Setting is the table's entry, looked up once where the change is
	// made (NewChange, the explorer's keys); nothing after the edge looks
	// a change's setting up by name again.
	Setting *Setting
	Value   Value
}

// NewChange parses a change from its text form (the edges: keys, --at,
// preset files).
func NewChange(side int, setting, value string) (Change, error) {
	st, err := LookupSetting(setting)
	if err != nil {
		return Change{}, err
	}
	v, err := st.Parse(value)
	if err != nil {
		return Change{}, err
	}
	return Change{Side: side, Setting: st, Value: v}, nil
}

// Text is the change's value in its text form.
func (c Change) Text() string {
	if c.Setting == nil {
		return ""
	}
	return c.Setting.Format(c.Value)
}

// Name is the change's setting's name ("" for none).
func (c Change) Name() string {
	if c.Setting == nil {
		return ""
	}
	return c.Setting.Name
}

// changeJSON is a Change in preset files and reports: the value in its
// text form, as --at takes it.
type changeJSON struct {
	At      Duration `json:"at,omitempty"`
	Side    int      `json:"side"`
	Setting string   `json:"setting"`
	Value   string   `json:"value"`
}

func (c Change) MarshalJSON() ([]byte, error) {
	return json.Marshal(changeJSON{c.At, c.Side, c.Name(), c.Text()})
}

func (c *Change) UnmarshalJSON(b []byte) error {
	var j changeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	n, err := NewChange(j.Side, j.Setting, j.Value)
	if err != nil {
		return err
	}
	n.At = j.At
	*c = n
	return nil
}

// ParseAt reads a scripted change "5s:b.sndbuf=64k".
func ParseAt(s string) (Change, error) {
	at, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Change{}, fmt.Errorf("--at %q: want TIME:SIDE.SETTING=VALUE, e.g. 5s:b.sndbuf=64k", s)
	}
	d, err := time.ParseDuration(at)
	if err != nil || d < 0 {
		return Change{}, fmt.Errorf("--at %q: bad time %q", s, at)
	}
	lhs, val, ok := strings.Cut(rest, "=")
	sd, setting, ok2 := strings.Cut(lhs, ".")
	if !ok || !ok2 {
		return Change{}, fmt.Errorf("--at %q: want TIME:SIDE.SETTING=VALUE", s)
	}
	i := strings.Index("ab", strings.ToLower(sd))
	if len(sd) != 1 || i < 0 {
		return Change{}, fmt.Errorf("--at %q: side %q is not a or b", s, sd)
	}
	c, err := NewChange(i, setting, val)
	if err != nil {
		return Change{}, fmt.Errorf("--at %q: %w", s, err)
	}
	if !c.Setting.Live() {
		return Change{}, fmt.Errorf("--at %q: %s is fixed for the run", s, setting)
	}
	c.At = Duration(d)
	return c, nil
}

func (c Change) String() string {
	return fmt.Sprintf("%v:%s.%s=%s", c.At.D(), string(rune('a'+c.Side)), c.Name(), c.Text())
}

// Get returns a side setting's value in its text form.
func (s *SideConfig) Get(setting string) string {
	st, ok := Lookup(setting)
	if !ok || !st.InSideConfig() {
		return ""
	}
	return st.Format(s.Value(st))
}

// Value is a side setting's value (the zero Value for a pair setting).
func (s *SideConfig) Value(st *Setting) Value {
	if st.get == nil {
		return Value{}
	}
	return st.get(s)
}

// Set changes a side setting from its text form, validating it. The side
// is left unchanged on error.
func (s *SideConfig) Set(setting, value string) error {
	st, err := LookupSetting(setting)
	if err != nil {
		return err
	}
	v, err := st.Parse(value)
	if err != nil {
		return err
	}
	return s.SetValue(st, v)
}

// SetValue changes a side setting to a parsed value, validating the side
// with it. The side is left unchanged on error.
func (s *SideConfig) SetValue(st *Setting, v Value) error {
	if !st.InSideConfig() {
		return fmt.Errorf("%s is not a side's setting", st.Name)
	}
	n := *s
	st.put(&n, v)
	if err := n.Validate(); err != nil {
		return asValueError(err, st.Name, st.Format(v))
	}
	*s = n
	return nil
}

func consumeList() []string {
	out := make([]string, len(ConsumeModes))
	for i, c := range ConsumeModes {
		out[i] = string(c.Name)
	}
	return out
}

// sizeProblem is a size's parse error without the size it names (the
// ValueError names it).
func sizeProblem(err error) error {
	var se *units.SizeError
	if errors.As(err, &se) {
		return errors.New(se.Problem)
	}
	return err
}

func parseHashThreads(s string) (Value, error) {
	n, err := ParseHashThreads(s)
	return Value{Int: n}, err
}

// SenderBuffers are the send buffers of a workload's bulk sender, the ones
// that decide how many calls its data costs: the server's for reads, the
// client's for writes, both for a mixed workload (Setting.SendsFor).
func SenderBuffers(workload Workload) []*Setting {
	var out []*Setting
	for _, st := range settingTable {
		if slices.Contains(st.SendsFor, workload) {
			out = append(out, st)
		}
	}
	return out
}

// BufferSettings are the socket-buffer settings, in the table's order.
func BufferSettings() []*Setting {
	var out []*Setting
	for _, st := range settingTable {
		if st.Type == TypeBuf {
			out = append(out, st)
		}
	}
	return out
}
