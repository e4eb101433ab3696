package model

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Warning is a condition worth showing: a kind and its typed parameters
// (What), never a sentence. Each kind is one type below, worded once, in
// the phrasebook (package phrase: short for the panel, long for reports,
// and its fix), as hyperfine words each of its warnings in one Display.
type Warning struct {
	T    float64  `json:"t"`
	Side SideID   `json:"side"` // WholePair: the whole pair
	Kind WarnKind `json:"kind"` // What's kind
	// What is the warning's kind with its parameters; nil in a warning
	// saved before warnings had them, whose Text and Fix are all of it.
	What WarningParams `json:"-"`
	// Text and Fix are the long wording and the fix as the JSON carries
	// them, for readers without nbdscope (written by the phrasebook,
	// SetWording); in memory, only a warning saved before warnings had
	// parameters, or of a kind this version does not know, has them.
	// Never set where a warning is raised: internal/wordcheck fails on
	// that.
	Text string `json:"text,omitempty"`
	Fix  string `json:"fix,omitempty"`
}

// Warn is a warning of what on side (T is set by whoever raises it).
func Warn(side SideID, what WarningParams) Warning {
	return Warning{Side: side, Kind: what.WarnKind(), What: what}
}

// WarnKind is the kind of a Warning: its JSON name.
type WarnKind string

// WarningParams are one kind of warning's parameters: the types below.
type WarningParams interface{ WarnKind() WarnKind }

// The kinds of a Warning, one a type of parameters.
const (
	WarnClamp              WarnKind = "clamp"               // Clamped
	WarnCores              WarnKind = "cores"               // FewCores
	WarnTurns              WarnKind = "turns"               // TurnFailed
	WarnScript             WarnKind = "script"              // ScriptFailed
	WarnPlacement          WarnKind = "placement"           // PlacementFailed
	WarnConsume            WarnKind = "consume"             // ConsumeNotChanged
	WarnCalls              WarnKind = "calls"               // CallsUnknown
	WarnRequests           WarnKind = "requests"            // RequestsFailed
	WarnFill               WarnKind = "fill"                // FillNotMeasured
	WarnExecFlow           WarnKind = "exec-flow"           // ExecFlowOther
	WarnExecIdle           WarnKind = "exec-idle"           // ExecIdle
	WarnTargetShared       WarnKind = "target-shared"       // TargetShared
	WarnTargetUnattributed WarnKind = "target-unattributed" // TargetUnattributed
	WarnTargetMeasured     WarnKind = "target-measured"     // TargetMeasured
	WarnTargetNotMeasured  WarnKind = "target-not-measured" // TargetNotMeasured
	WarnTargetBuffersKept  WarnKind = "target-buffers-kept" // TargetBuffersKept
	WarnTargetBufferUnset  WarnKind = "target-buffer-unset" // TargetBufferUnset
	WarnTargetPeer         WarnKind = "target-peer"         // TargetPeerUnknown
	// WarnTarget is the kind every --target warning had before they were
	// told apart: saved runs have it, with their Text.
	WarnTarget WarnKind = "target"
)

// warnParams makes the empty parameters of each kind, for reading a
// warning back (and, in the phrasebook's tests, for wording every kind).
var warnParams = map[WarnKind]func() WarningParams{
	WarnClamp:              func() WarningParams { return &Clamped{} },
	WarnCores:              func() WarningParams { return &FewCores{} },
	WarnTurns:              func() WarningParams { return &TurnFailed{} },
	WarnScript:             func() WarningParams { return &ScriptFailed{} },
	WarnPlacement:          func() WarningParams { return &PlacementFailed{} },
	WarnConsume:            func() WarningParams { return &ConsumeNotChanged{} },
	WarnCalls:              func() WarningParams { return &CallsUnknown{} },
	WarnRequests:           func() WarningParams { return &RequestsFailed{} },
	WarnFill:               func() WarningParams { return &FillNotMeasured{} },
	WarnExecFlow:           func() WarningParams { return &ExecFlowOther{} },
	WarnExecIdle:           func() WarningParams { return &ExecIdle{} },
	WarnTargetShared:       func() WarningParams { return &TargetShared{} },
	WarnTargetUnattributed: func() WarningParams { return &TargetUnattributed{} },
	WarnTargetMeasured:     func() WarningParams { return &TargetMeasured{} },
	WarnTargetNotMeasured:  func() WarningParams { return &TargetNotMeasured{} },
	WarnTargetBuffersKept:  func() WarningParams { return &TargetBuffersKept{} },
	WarnTargetBufferUnset:  func() WarningParams { return &TargetBufferUnset{} },
	WarnTargetPeer:         func() WarningParams { return &TargetPeerUnknown{} },
}

// WarnKinds are the kinds that have parameters, in the order above.
func WarnKinds() []WarnKind {
	return []WarnKind{WarnClamp, WarnCores, WarnTurns, WarnScript, WarnPlacement, WarnConsume, WarnCalls,
		WarnRequests, WarnFill, WarnExecFlow, WarnExecIdle, WarnTargetShared, WarnTargetUnattributed, WarnTargetMeasured,
		WarnTargetNotMeasured, WarnTargetBuffersKept, WarnTargetBufferUnset, WarnTargetPeer}
}

// ParamsOf is kind's empty parameters (a pointer), nil for a kind that
// has none.
func ParamsOf(kind WarnKind) WarningParams {
	if mk := warnParams[kind]; mk != nil {
		return mk()
	}
	return nil
}

// Clamped: the kernel gave a buffer less than the request should have.
type Clamped struct {
	Setting   string `json:"setting"`   // "sndbuf"
	Requested int64  `json:"requested"` // bytes asked
	Expected  int64  `json:"expected"`  // what the request should give
	Got       int64  `json:"got"`       // what the kernel gave
	Limit     string `json:"limit"`     // the sysctl that clamped it ("net.core.wmem_max")
	Command   string `json:"command"`   // the command that raises it
	Persist   string `json:"persist"`   // the line that keeps it raised
	Where     string `json:"where"`     // the file that line goes in
}

// FewCores: too few cores for concurrent sides to run at once fairly.
type FewCores struct {
	Cores int `json:"cores"`
}

// TurnFailed: a load could not be paused (or resumed) for its turn.
type TurnFailed struct {
	Pause bool   `json:"pause"` // false: resume
	Err   string `json:"error"`
}

// ScriptFailed: a scripted change (--at) failed.
type ScriptFailed struct {
	Change string `json:"change"` // as --at writes it
	Err    string `json:"error"`
}

// PlacementFailed: the processes could not be held where asked.
type PlacementFailed struct {
	Placement Place    `json:"placement"`
	Failures  []string `json:"failures"` // "load: …", "real server: …"
}

// ConsumeNotChanged: a consume mode's setting did not take.
type ConsumeNotChanged struct {
	Setting string `json:"setting"` // "hash-threads"
	Value   int    `json:"value"`
	Err     string `json:"error"`
}

// CallsUnknown: a real client's socket calls cannot be counted.
type CallsUnknown struct {
	Reason Reason `json:"reason"`
}

// RequestsFailed: requests failed; the figures count only the others.
type RequestsFailed struct {
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"` // the sample they failed in
	LastErr string  `json:"last_error"`
}

// FillNotMeasured: a side's send-buffer fill is n/a over its span.
type FillNotMeasured struct {
	Reason Reason `json:"reason"`
}

// ExecFlowOther: a real client moved its data the other way than the
// side's workload says; its figures follow what it did.
type ExecFlowOther struct {
	Flow     Flow     `json:"flow"` // what the client did
	Workload Workload `json:"workload"`
	Sent     uint64   `json:"server_sent"`     // payload its server sent in the interval
	Received uint64   `json:"server_received"` // and received
}

// ExecIdle: a real client moved no payload in the whole run, so its
// throughput and figures per 2 MiB are n/a.
type ExecIdle struct {
	Command string `json:"command"`
}

// TargetShared: in concurrent mode, one --target process serves both
// sides, so each side's server figures are n/a.
type TargetShared struct{}

// TargetUnattributed: a --target process serving both sides has samples
// whose counts are attributed to neither side.
type TargetUnattributed struct {
	PID int `json:"pid,omitempty"` // 0: not known
}

// TargetMeasured: the target's local server is measured as a real one.
type TargetMeasured struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
}

// TargetNotMeasured: the target's server is not measured (figures n/a).
type TargetNotMeasured struct {
	PID     int    `json:"pid,omitempty"` // 0: not found
	Command string `json:"command,omitempty"`
	Reason  Reason `json:"reason"`
}

// TargetBuffersKept: the target's measured server keeps its own buffers.
type TargetBuffersKept struct {
	PID    int    `json:"pid"`
	Reason Reason `json:"reason"`
}

// TargetBufferUnset: a buffer asked for a --target side is not applied.
type TargetBufferUnset struct {
	Setting string `json:"setting"`
	Buf     string `json:"buffer"` // as asked
	Reason  Reason `json:"reason"`
}

// TargetPeerUnknown: the target's server could not be told which
// connections are our load's, so its buffers are left as they are.
type TargetPeerUnknown struct {
	PID int    `json:"pid"`
	Err string `json:"error"`
}

func (Clamped) WarnKind() WarnKind            { return WarnClamp }
func (FewCores) WarnKind() WarnKind           { return WarnCores }
func (TurnFailed) WarnKind() WarnKind         { return WarnTurns }
func (ScriptFailed) WarnKind() WarnKind       { return WarnScript }
func (PlacementFailed) WarnKind() WarnKind    { return WarnPlacement }
func (ConsumeNotChanged) WarnKind() WarnKind  { return WarnConsume }
func (CallsUnknown) WarnKind() WarnKind       { return WarnCalls }
func (RequestsFailed) WarnKind() WarnKind     { return WarnRequests }
func (FillNotMeasured) WarnKind() WarnKind    { return WarnFill }
func (ExecFlowOther) WarnKind() WarnKind      { return WarnExecFlow }
func (ExecIdle) WarnKind() WarnKind           { return WarnExecIdle }
func (TargetShared) WarnKind() WarnKind       { return WarnTargetShared }
func (TargetUnattributed) WarnKind() WarnKind { return WarnTargetUnattributed }
func (TargetMeasured) WarnKind() WarnKind     { return WarnTargetMeasured }
func (TargetNotMeasured) WarnKind() WarnKind  { return WarnTargetNotMeasured }
func (TargetBuffersKept) WarnKind() WarnKind  { return WarnTargetBuffersKept }
func (TargetBufferUnset) WarnKind() WarnKind  { return WarnTargetBufferUnset }
func (TargetPeerUnknown) WarnKind() WarnKind  { return WarnTargetPeer }

// warningJSON is a Warning as the JSON has it: What under "params".
type warningJSON struct {
	T      float64         `json:"t"`
	Side   SideID          `json:"side"`
	Kind   WarnKind        `json:"kind"`
	Params json.RawMessage `json:"params,omitempty"`
	Text   string          `json:"text,omitempty"`
	Fix    string          `json:"fix,omitempty"`
}

// MarshalJSON writes the kind, its parameters, and the long wording and
// fix (SetWording) for readers without nbdscope.
func (w Warning) MarshalJSON() ([]byte, error) {
	j := warningJSON{T: w.T, Side: w.Side, Kind: w.Kind, Text: w.Text, Fix: w.Fix}
	if w.What != nil {
		j.Kind = w.What.WarnKind()
		p, err := json.Marshal(w.What)
		if err != nil {
			return nil, err
		}
		j.Params = p
		if wording != nil && j.Text == "" {
			j.Text, j.Fix = wording.WarningLong(w), wording.WarningFix(w)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a warning with its parameters, or one saved before
// warnings had them (What nil: its Text and Fix are all of it).
func (w *Warning) UnmarshalJSON(b []byte) error {
	var j warningJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*w = Warning{T: j.T, Side: j.Side, Kind: j.Kind, Text: j.Text, Fix: j.Fix}
	if len(j.Params) == 0 || string(j.Params) == "null" {
		return nil
	}
	p := ParamsOf(j.Kind)
	if p == nil {
		return nil // a kind this version does not know: its text is all of it
	}
	if err := json.Unmarshal(j.Params, p); err != nil {
		return fmt.Errorf("warning %s: %w", j.Kind, err)
	}
	// Text and Fix are the phrasebook's wording of What, made again from
	// it: a warning reads back as it was raised.
	w.What, w.Text, w.Fix = deref(p), "", ""
	return nil
}

// deref is the parameters p points to, as the value warnings carry.
func deref(p WarningParams) WarningParams {
	return reflect.ValueOf(p).Elem().Interface().(WarningParams)
}
