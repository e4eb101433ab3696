package model

import "nbdscope/stats"

// The gap verdict: what a run of the default pair (A at the OS default
// send buffer, B at 2 MiB, taking turns) shows of the buffer's effect on
// this machine, from what it measured, with the one noise rule
// (Difference: Welch over turn batches). doctor says it; it never
// promises more than the pair it measured.

// GapKind is what the pair showed.
type GapKind string

const (
	// GapShown: B's client needed fewer receive calls per 2 MiB than A's
	// (by GapCallsFell or more) and moved data faster beyond noise.
	GapShown GapKind = "shown"
	// GapCallsOnly: the calls fell, but the time did not beyond noise:
	// something else sets the pace here (the client's core, other load).
	GapCallsOnly GapKind = "calls_only"
	// GapLittle: the calls hardly fell: the default buffer already
	// bridges the reader's wake-ups here.
	GapLittle GapKind = "little"
	// GapUnjudged: too few turns, or a figure not measured.
	GapUnjudged GapKind = "unjudged"
)

// GapCallsFell is the fall in receive calls per 2 MiB, A's over B's,
// from which the buffer is said to change how the client reads: half as
// many calls, where the series measured about ten times fewer.
const GapCallsFell = 2.0

// GapVerdict is the verdict with the figures it came from.
type GapVerdict struct {
	Kind GapKind `json:"kind"`
	// Calls is B's receive calls per 2 MiB over A's (below 1: fewer);
	// Speed B's throughput over A's; each with its interval.
	Calls Difference `json:"calls_b_over_a"`
	Speed Difference `json:"throughput_b_over_a"`
	// ClientBusyA is A's client's cores busy; ClientFullA says it is at
	// the pace rule's full core (0.9), where its own work sets its pace,
	// which a buffer cannot change.
	ClientBusyA Figure `json:"client_cores_busy_a"`
	ClientFullA bool   `json:"client_full_a"`
	// Noisy: other processes kept a quarter of a core or more busy.
	Noisy bool `json:"noisy"`
	// ContendedA names A's process that waited for a CPU ContendedShare
	// of the span or more (the pace verdict's contention rule), "" for
	// none or not measured; WaitingA is its share of the span.
	ContendedA string `json:"contended_a,omitempty"`
	WaitingA   Figure `json:"waiting_for_cpu_a,omitempty"`
}

// GapVerdictOf judges a run of the pair.
func GapVerdictOf(rep Report) GapVerdict {
	v := GapVerdict{Kind: GapUnjudged, ClientBusyA: Unknown, Noisy: rep.Noisy()}
	if len(rep.Sides) != 2 {
		return v
	}
	v.ClientBusyA = rep.Sides[0].Summary.Client.CoresBusy
	v.ClientFullA = v.ClientBusyA.Known() && v.ClientBusyA >= PaceFull
	if pv := VerdictOf(rep.Sides[0].Summary.Figures); pv.Contended != "" {
		v.ContendedA, v.WaitingA = pv.Contended, pv.WaitingFor()
	}
	v.Calls = SidesDifference(rep, func(s Summary) Figure { return s.ReceiverCallsPer2MiB() })
	v.Speed = SidesDifference(rep, func(s Summary) Figure { return s.ThroughputBps })
	v.Kind = gapKind(v.Calls, v.Speed)
	return v
}

// gapKind is the rule: the calls must fall beyond noise by GapCallsFell
// or more before the buffer is said to change how the client reads, and
// the speed must rise beyond noise before it is said to save time.
func gapKind(calls, speed Difference) GapKind {
	switch {
	case !calls.Known() || !speed.Known():
		return GapUnjudged
	case calls.Kind != stats.Beyond || calls.Ratio > 1/GapCallsFell:
		return GapLittle
	case speed.Kind == stats.Beyond && speed.Ratio > 1:
		return GapShown
	}
	return GapCallsOnly
}
