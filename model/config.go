// Package model is what a run is, apart from running one: its
// configuration (Config, SideConfig, Buf), the settings table's
// declarations (setting.go) and the changes made through it (Change,
// ParseAt), the figures with their one definition each (metrics.go,
// figures.go), the latency histogram, the report of a run or a sweep
// (Report, SweepReport) and its one CSV layout, and the updates a running
// pair sends (Update, Crash, Warning). The engine runs pairs and the
// sweep package sweeps; the explorer, the plots, the presets and the runs
// store read and write these types without either.
package model

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"nbdscope/clientrun"
	"nbdscope/nbd"
	"nbdscope/platform"
	"nbdscope/shellword"
	"nbdscope/units"
)

// Buf is a socket buffer setting: "default" (leave the OS default alone),
// "macos" (an effective 8 KiB, the macOS unix-socket default) or a size in
// bytes as requested with setsockopt. Its text form is what flags, presets
// and JSON use.
type Buf struct {
	Kind  BufKind
	Bytes int // for BufSize: the requested size
}

// BufKind tells how a Buf is meant.
type BufKind int

const (
	BufDefault BufKind = iota
	BufSize
	BufMacOS
)

// MacOSSendBuffer is the macOS default SO_SNDBUF of a unix stream socket.
const MacOSSendBuffer = 8 << 10

// ParseBuf reads "default", "macos" or a size ("65536", "64k", "2m").
func ParseBuf(s string) (Buf, error) {
	b, err := parseBuf(s)
	if err != nil {
		return Buf{}, fmt.Errorf("buffer %q: %w", s, err)
	}
	return b, nil
}

// parseBuf is ParseBuf, its error the reason alone (Setting.Parse's
// ValueError names the setting and the value).
func parseBuf(s string) (Buf, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default", "os":
		return Buf{Kind: BufDefault}, nil
	case "macos", "mac":
		return Buf{Kind: BufMacOS}, nil
	}
	n, err := units.ParseSize(s)
	if err != nil {
		return Buf{}, errors.New("want default, macos or a size like 64k or 2m")
	}
	if n < 1024 || n > 1<<30 {
		return Buf{}, errors.New("want a size between 1k and 1g")
	}
	return Buf{Kind: BufSize, Bytes: int(n)}, nil
}

func (b Buf) String() string {
	switch b.Kind {
	case BufMacOS:
		return "macos"
	case BufSize:
		return units.FormatSize(int64(b.Bytes))
	}
	return "default"
}

// MarshalText and UnmarshalText make Buf a plain string in JSON.
func (b Buf) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

func (b *Buf) UnmarshalText(t []byte) error {
	v, err := ParseBuf(string(t))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// BufRequest turns a Buf into a setsockopt request (0 = leave the default).
func BufRequest(b Buf) int {
	switch b.Kind {
	case BufSize:
		return b.Bytes
	case BufMacOS:
		return platform.MacOSRequest()
	}
	return 0
}

// Workload is what a side's load does: its requests' direction and
// order. JSON and the command line write its name.
type Workload string

// Workloads.
const (
	WorkRead      Workload = "read"
	WorkWrite     Workload = "write"
	WorkRandRead  Workload = "randread"
	WorkRandWrite Workload = "randwrite"
	WorkMixed     Workload = "mixed"
)

// BufLadder is the ladder of buffer sizes the explorer's + and - step
// through and the command line completes.
var BufLadder = []string{"default", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m", "2m", "4m", "8m"}

// Workloads lists the valid workloads in the order the UI cycles them.
var Workloads = []Workload{WorkRead, WorkWrite, WorkRandRead, WorkRandWrite, WorkMixed}

// Mode is how a pair's two sides share the machine: taking turns
// (alternate) or running at once (concurrent). JSON, presets and the
// command line write its name.
type Mode string

// Modes.
const (
	ModeAlternate  Mode = "alternate"
	ModeConcurrent Mode = "concurrent"
)

// Modes lists the modes in the order the UI cycles them.
var Modes = []Mode{ModeAlternate, ModeConcurrent}

// Transport is the socket family a spawned side's server listens on and
// its load dials. JSON, presets and the command line write its name.
type Transport string

// Transports.
const (
	TransportUnix Transport = "unix"
	TransportTCP  Transport = "tcp"
)

// Transports lists the transports in the order the UI cycles them.
var Transports = []Transport{TransportUnix, TransportTCP}

// Limits of the load settings (the command-line contract).
const (
	MinConnections = 1
	MaxConnections = 64
	MinRequestSize = 512
	MaxRequestSize = 32 << 20
	MinInFlight    = 1
	MaxInFlight    = 256
)

// SideConfig is everything that defines one side.
type SideConfig struct {
	Name string `json:"name"` // "A" or "B"

	// Target is an NBD URI of an external server (qemu-nbd, nbdkit); empty
	// means a spawned nbdscope server, configured by the fields below.
	Target string `json:"target,omitempty"`
	// Exec is a real client command (qemu-img, nbdcopy …) that is the
	// side's load instead of our load process, run in a loop against the
	// side's spawned server; empty for our own load.
	Exec string `json:"exec,omitempty"`
	// Server is a real server command (qemu-nbd, nbdkit …) that serves
	// the side instead of our server child ({socket}, {port}, {size}
	// replaced; engine/child's realserver.go); empty for ours.
	Server    string    `json:"server,omitempty"`
	Backend   string    `json:"backend"` // null, pattern, memory, file:PATH
	Size      int64     `json:"size"`
	Transport Transport `json:"transport"` // unix or tcp
	SndBuf    Buf       `json:"sndbuf"`    // server SO_SNDBUF
	// ServerRcvBuf is the server's SO_RCVBUF: what its receiving side
	// holds of a write's data (ours, or a real server's sockets, changed
	// live from outside).
	ServerRcvBuf Buf `json:"server_rcvbuf,omitempty"`

	ClientSndBuf Buf      `json:"client_sndbuf"`
	ClientRcvBuf Buf      `json:"client_rcvbuf"`
	Connections  int      `json:"connections"`
	RequestSize  int      `json:"request_size"`
	InFlight     int      `json:"in_flight"`
	Workload     Workload `json:"workload"`
	ReadPercent  int      `json:"read_percent"` // for mixed
	Verify       bool     `json:"verify,omitempty"`
	// Consume is what the load process does with READ data: copy, scan,
	// hash or none (consume.go).
	Consume ConsumeMode `json:"consume,omitempty"`
	// HashThreads is how many threads the hash mode digests with; 0 is
	// auto (ResolveHashThreads).
	HashThreads int `json:"hash_threads,omitempty"`
	// Reader is how our load's reader waits: poll (qemu's ppoll, the
	// default on Linux) or netpoller (reader.go). Empty means
	// DefaultReader().
	Reader ReaderMode `json:"reader,omitempty"`
	// Placement is where the side's server and load process run: split,
	// shared or os (placement.go). Empty, as in files written before it
	// existed, means DefaultPlacement().
	Placement Place `json:"placement,omitempty"`
}

// Config is a pair and how to run it.
type Config struct {
	Sides [2]SideConfig `json:"sides"`
	Mode  Mode          `json:"mode"`
	// Fill is what measures the send-buffer fill (SetFill): "" or
	// FillSourceKernel, the kernel's timer where its programs load (else
	// the sampler), FillSourceEvents, the kernel's exact programs, or
	// FillSourceSampler (Config.FillSource).
	Fill     string   `json:"fill,omitempty"`
	Duration Duration `json:"duration"` // 0 = until stopped (TUI)
	Interval Duration `json:"interval"`
	Script   []Change `json:"script,omitempty"`
}

// Duration is a time.Duration written as "250ms" in JSON.
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(t []byte) error {
	v, err := time.ParseDuration(string(t))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// DefaultSize is a side's export when none is given: large enough that
// our load, which reads it in a loop, never finishes it in a run.
const DefaultSize = 64 << 30

// RealPairSize is the export a real server serves a real client (a side
// with both --server and --exec) when no size is given. Such a side's
// payload is counted only when a client run ends (one export a run), so a
// run must end within a few seconds: qemu-img convert reads 1 GiB of
// qemu-nbd's null-co in 0.65 s on a quiet 2-vCPU machine (the series'
// 4 GiB sweep row, 2.6 s) and in 4.2 s with the cores contended, where
// the 64 GiB default took longer than a 20 s run and counted nothing. It
// is calibrate's --bytes (the real client's export there): small enough
// to end runs in a turn or a few, large enough that a run's start
// (tens of ms) is a few percent of it.
const RealPairSize = 1 << 30

// RealPairExport is the export a side's server serves: RealPairSize for a
// real client against a real server at the default size, else its own.
// A size given as 64g is the default's and taken as not given.
func (s SideConfig) RealPairExport() int64 {
	if s.Exec != "" && s.Server != "" && s.Size == DefaultSize {
		return RealPairSize
	}
	return s.Size
}

// DefaultSide is the built-in side: a spawned null server on a unix socket,
// read like qemu-img convert does (1 connection, 2 MiB requests, 8 in
// flight, each buffer scanned for zeroes).
func DefaultSide(name string) SideConfig {
	return SideConfig{
		Name: name, Backend: "null", Size: DefaultSize, Transport: TransportUnix,
		Connections: 1, RequestSize: 2 << 20, InFlight: 8,
		Workload: WorkRead, ReadPercent: 70, Consume: ConsumeScan, Reader: DefaultReader(),
		Placement: DefaultPlacement(),
	}
}

// TurnLength is how long a side runs alone in alternate mode: long
// enough for several samples (four intervals), short enough that both
// sides see the same machine, and never under a second.
func TurnLength(interval time.Duration) time.Duration { return max(4*interval, time.Second) }

// DefaultMode is alternate on machines with fewer than 4 cores, where two
// sides running at once would compete for CPU and distort each other.
func DefaultMode() Mode {
	if runtime.NumCPU() < 4 {
		return ModeAlternate
	}
	return ModeConcurrent
}

// DefaultConfig is the built-in default: A at the OS default send buffer, B
// at 2 MiB.
func DefaultConfig() Config {
	a, b := DefaultSide("A"), DefaultSide("B")
	b.SndBuf = Buf{Kind: BufSize, Bytes: 2 << 20}
	return Config{
		Sides:    [2]SideConfig{a, b},
		Mode:     DefaultMode(),
		Interval: Duration(250 * time.Millisecond),
	}
}

// CheckInterval refuses a sample interval outside 50 ms to 1 min: the
// flag checks it itself, so that its error names the flag, and Validate
// for a preset file.
func CheckInterval(d time.Duration) error {
	if d < 50*time.Millisecond || d > time.Minute {
		return errors.New("want 50ms to 1m")
	}
	return nil
}

// Validate checks a configuration and names the first problem.
func (c *Config) Validate() error {
	if !slices.Contains(Modes, c.Mode) {
		return fmt.Errorf("mode %q: want alternate or concurrent", c.Mode)
	}
	if err := CheckInterval(c.Interval.D()); err != nil {
		return fmt.Errorf("interval %v: %w", c.Interval.D(), err)
	}
	if c.Duration < 0 {
		return fmt.Errorf("duration %v is negative", c.Duration.D())
	}
	for i := range c.Sides {
		if err := c.Sides[i].Validate(); err != nil {
			return fmt.Errorf("side %s: %w", c.Sides[i].Name, err)
		}
	}
	for _, ch := range c.Script {
		if ch.Side < 0 || ch.Side > 1 {
			return fmt.Errorf("scripted change %v: bad side", ch)
		}
		if err := c.checkChange(ch); err != nil {
			return fmt.Errorf("scripted change at %v: %w", ch.At.D(), err)
		}
	}
	return nil
}

// Normalize writes out the settings whose empty value means something
// (consume, placement) as that value, so a side reads the same after a
// save and a load (an empty field is left out of the JSON, and a loader
// that starts from DefaultSide would then read the default instead).
func (s *SideConfig) Normalize() {
	s.Consume = ConsumeMode(s.Get(SetConsume))
	s.Reader = ReaderMode(s.Get(SetReader))
	s.Placement = Place(s.Get(SetPlacement))
}

// errExecNoTarget refuses an exec side with a --target.
var errExecNoTarget = errors.New("a side with a command runs against its own spawned server, not a --target")

// Validate checks one side.
func (s *SideConfig) Validate() error {
	if s.Exec != "" {
		if s.Target != "" {
			return &ValueError{Setting: SetExec, Value: s.Exec, Reason: errExecNoTarget}
		}
		if _, err := shellword.Split(s.Exec); err != nil {
			return &ValueError{Setting: SetExec, Value: s.Exec, Reason: err}
		}
		// Without it the client runs, connects nowhere and moves nothing.
		if err := clientrun.NeedsOne(s.Exec, "{uri}", "{socket}"); err != nil {
			return &ValueError{Setting: SetExec, Value: s.Exec, Reason: err}
		}
	}
	if err := s.validateServer(); err != nil {
		return err
	}
	if s.Target != "" {
		if _, err := nbd.ParseURI(s.Target); err != nil {
			return &ValueError{Setting: SetTarget, Value: s.Target, Reason: uriProblem(err)}
		}
	} else {
		if !slices.Contains(Transports, s.Transport) {
			return refused(SetTransport, string(s.Transport), "want unix or tcp")
		}
		if s.Size <= 0 || s.Size%512 != 0 {
			return refused(SetSize, strconv.FormatInt(s.Size, 10), "want a positive multiple of 512")
		}
		switch {
		case s.Backend == "null", s.Backend == "pattern", s.Backend == "memory", strings.HasPrefix(s.Backend, "file:") && len(s.Backend) > 5:
		default:
			return refused(SetBackend, s.Backend, "want null, pattern, memory or file:PATH")
		}
	}
	if s.Connections < MinConnections || s.Connections > MaxConnections {
		return refused(SetConnections, strconv.Itoa(s.Connections), "want %d…%d", MinConnections, MaxConnections)
	}
	if s.RequestSize < MinRequestSize || s.RequestSize > MaxRequestSize || s.RequestSize%512 != 0 {
		return refused(SetRequestSize, strconv.Itoa(s.RequestSize), "want a multiple of 512 from 512 to 32m")
	}
	if s.InFlight < MinInFlight || s.InFlight > MaxInFlight {
		return refused(SetInFlight, strconv.Itoa(s.InFlight), "want %d…%d", MinInFlight, MaxInFlight)
	}
	if !validWorkload(s.Workload) {
		return refused(SetWorkload, string(s.Workload), "want one of %s", strings.Join(WorkloadNames(), ", "))
	}
	if s.Consume != "" && !validConsume(s.Consume) {
		return refused(SetConsume, string(s.Consume), "want %s", consumeNames())
	}
	if s.Reader != "" && !validReader(s.Reader) {
		return refused(SetReader, string(s.Reader), "want netpoller (poll, qemu's ppoll wait, is built on Linux only)")
	}
	if s.HashThreads < 0 || s.HashThreads > MaxHashThreads {
		return refused(SetHashThreads, strconv.Itoa(s.HashThreads), "want auto or 1…%d", MaxHashThreads)
	}
	if s.Placement != "" && !slices.Contains(Placements, s.Placement) {
		return refused(SetPlacement, string(s.Placement), "want one of %s", strings.Join(PlacementNames(), ", "))
	}
	if s.ReadPercent < 0 || s.ReadPercent > 100 {
		return refused(SetReadPercent, strconv.Itoa(s.ReadPercent), "want 0…100")
	}
	return nil
}

func validWorkload(w Workload) bool { return slices.Contains(Workloads, w) }

// WorkloadNames are the workloads' names, in Workloads' order.
func WorkloadNames() []string { return names(Workloads) }

// PlacementNames are the placements' names, in Placements' order.
func PlacementNames() []string { return names(Placements) }

// names are typed names as text (an enum's choices).
func names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// checkChange checks that a change applies to the configuration: a side
// setting leaves its side valid, a mode is one of the modes.
func (c *Config) checkChange(ch Change) error {
	st := ch.Setting
	if st == nil {
		return fmt.Errorf("a change of no setting")
	}
	if !st.Live() {
		return fmt.Errorf("%s is fixed for the run", st.Name)
	}
	if !st.InSideConfig() {
		return nil // parsed, so valid: mode and paused need nothing else
	}
	s := c.Sides[ch.Side]
	return s.SetValue(st, ch.Value)
}
