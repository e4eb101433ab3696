package model

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Reason is why a figure is not known, or why something could not be
// done: a kind and its parameters, never a sentence. The phrasebook
// (package phrase) words each kind once, short for the panel and long for
// reports and warnings; the JSON writes the kind, the parameters and the
// long wording, for readers without nbdscope.
type Reason struct {
	Kind ReasonKind `json:"kind"`
	// What is what could not be read or done, as the instrument names it
	// ("its sockets", "the client's socket calls"); "" where the kind says it.
	What string `json:"what,omitempty"`
	// Detail is the system's own account: the facts read by the
	// instrument that refused ("kernel.perf_event_paranoid is 3 …"), or an
	// error's text.
	Detail string `json:"detail,omitempty"`
	// Fix is the one command that lifts it; "" where none does.
	Fix string `json:"fix,omitempty"`
	// PIDs are the processes concerned (a connection looked for between
	// them; the process that serves both sides).
	PIDs []int `json:"pids,omitempty"`
	// Samples is how many samples it held over (a fill missed in each).
	Samples int `json:"samples,omitempty"`
	// Receivers are the processes that received, in order, in a span
	// whose receiver changed ("client", "server", "client").
	Receivers []string `json:"receivers,omitempty"`
	// Text is the long wording as the JSON carries it, for readers
	// without nbdscope; in memory, only a reason saved before reasons had
	// kinds (ReasonText), or of a kind this version does not know, has
	// one. Never set where a reason is made.
	Text string `json:"text,omitempty"`
}

// ReasonKind is the kind of a Reason: its JSON name.
type ReasonKind string

// The kinds of a Reason. Each is worded in phrase/reason.go.
const (
	// ReasonNoPermission: the OS refused, and a privilege or a setting
	// (Fix) would allow it: perf_event_paranoid, another user's process,
	// Yama's ptrace_scope, a process that is not dumpable.
	ReasonNoPermission ReasonKind = "no-permission"
	// ReasonBlocked: refused although the rules we can read allow it (a
	// seccomp filter, a security module).
	ReasonBlocked ReasonKind = "blocked"
	// ReasonNoKernelSupport: the kernel lacks what it takes (no
	// perf events, no syscall tracepoints, no tracefs, no pidfd_getfd).
	ReasonNoKernelSupport ReasonKind = "no-kernel-support"
	// ReasonNotOnThisOS: this OS has no such instrument (macOS).
	ReasonNotOnThisOS ReasonKind = "not-on-this-os"
	// ReasonNoConnection: no connection was found between the processes
	// (PIDs) at the looks in its samples (Samples).
	ReasonNoConnection ReasonKind = "no-connection"
	// ReasonNoneRead: the sampler read none of the data sockets.
	ReasonNoneRead ReasonKind = "none-read"
	// ReasonCountingOff: the user turned counting off (NBDSCOPE_SYSCOUNT=off).
	ReasonCountingOff ReasonKind = "counting-off"
	// ReasonGone: the process exited.
	ReasonGone ReasonKind = "gone"
	// ReasonSharedServer: one --target process serves both sides and both
	// loads ran in the span: its counts cannot be split between them.
	ReasonSharedServer ReasonKind = "shared-server"
	// ReasonReceiverChanged: which process received changed within the span.
	ReasonReceiverChanged ReasonKind = "receiver-changed"
	// ReasonServedByUs: the target is served by nbdscope itself.
	ReasonServedByUs ReasonKind = "served-by-nbdscope"
	// ReasonNotLocal: the target's server is not a local process
	// nbdscope may look at.
	ReasonNotLocal ReasonKind = "not-local"
	// ReasonNotRunning: the side is not running.
	ReasonNotRunning ReasonKind = "not-running"
	// ReasonFailed: an attempt failed with the system's error (Detail).
	ReasonFailed ReasonKind = "failed"
	// ReasonText: a reason saved before reasons had kinds; Text is all of it.
	ReasonText ReasonKind = "text"
)

// ReasonKinds are the kinds of a Reason, for the phrasebook's tests.
var ReasonKinds = []ReasonKind{ReasonNoPermission, ReasonBlocked, ReasonNoKernelSupport, ReasonNotOnThisOS,
	ReasonNoConnection, ReasonNoneRead, ReasonCountingOff, ReasonGone, ReasonSharedServer, ReasonReceiverChanged,
	ReasonServedByUs, ReasonNotLocal, ReasonNotRunning, ReasonFailed, ReasonText}

// Failed is the reason an attempt failed with err, as the system said it.
func Failed(err error) *Reason { return &Reason{Kind: ReasonFailed, Detail: err.Error()} }

// Wording words reasons and warnings for the JSON's readers without
// nbdscope. The phrasebook registers itself (SetWording) when a program
// links it; a reason or warning written without it carries no text.
type Wording interface {
	ReasonLong(Reason) string
	WarningLong(Warning) string
	WarningFix(Warning) string
}

var wording Wording

// SetWording registers the phrasebook that words the JSON's text fields:
// the model cannot import it (it imports the model).
func SetWording(w Wording) { wording = w }

type reasonJSON Reason

// MarshalJSON writes the reason with its long wording in text.
func (r Reason) MarshalJSON() ([]byte, error) {
	if r.Text == "" && wording != nil && r.Kind != ReasonText {
		r.Text = wording.ReasonLong(r)
	}
	return json.Marshal(reasonJSON(r))
}

// UnmarshalJSON reads a reason object, or the sentence a run saved
// before reasons had kinds wrote in its place (a ReasonText).
func (r *Reason) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = Reason{Kind: ReasonText, Text: s}
		return nil
	}
	if err := json.Unmarshal(b, (*reasonJSON)(r)); err != nil {
		return err
	}
	if r.Kind != ReasonText && slices.Contains(ReasonKinds, r.Kind) {
		r.Text = "" // the phrasebook's wording, made again from the kind: a reason reads back as it was made
	}
	return nil
}
