package model

import (
	"math"
	"time"

	"nbdscope/stats"
)

// What a calibration is (nbdscope calibrate; sweep.Calibrate runs one):
// our load and a real client (qemu-img convert) reading from the same
// server at the same send buffers, and each client's figures side by
// side with their ratio, so a user sees how far the stand-in is from the
// client it stands for on this machine.

// CalibrationVersion is the schema version of CalibrationReport
// (calibrate --json). Version 2: a row's calls_na is a reason object
// (model.Reason), where it was a sentence; a sentence still reads.
// Version 3: looks and confidence (--repeat auto); repeat is the most
// repeats a buffer could take, each row's clients say how many it took.
const CalibrationVersion = 3

// ClientFigures are one client's figures at one buffer, from its median
// measurement (by time): per 2 MiB of payload, as a run's.
type ClientFigures struct {
	RecvCallsPer2MiB  Figure `json:"recv_calls_per_2mib"`
	RecvEAGAINPer2MiB Figure `json:"recv_eagain_per_2mib"`
	// WakeupsPer2MiB are voluntary plus involuntary context switches.
	WakeupsPer2MiB Figure `json:"wakeups_per_2mib"`
	// CPUMsPer2MiB is user plus system CPU, in milliseconds per 2 MiB.
	CPUMsPer2MiB  Figure  `json:"cpu_ms_per_2mib"`
	ThroughputBps Figure  `json:"throughput_bps"`
	Seconds       float64 `json:"seconds"`
	Repeats       int     `json:"repeats"`
}

// ClientFiguresOf takes a client's figures from a sweep row (of our load,
// or of an exec sweep): the row's client process.
func ClientFiguresOf(r SweepRow) ClientFigures {
	c := r.Figures.Client
	wake := c.VolCSPer2MiB + c.InvolCSPer2MiB // unknown when either is
	cpu := Unknown
	if c.CPUSPerGiB.Known() {
		cpu = c.CPUSPerGiB * 1000 * PayloadUnit / GiB
	}
	return ClientFigures{RecvCallsPer2MiB: c.RecvCallsPer2MiB, RecvEAGAINPer2MiB: c.RecvEAGAINPer2MiB,
		WakeupsPer2MiB: wake, CPUMsPer2MiB: cpu, ThroughputBps: r.ThroughputBps, Seconds: r.Seconds, Repeats: r.Repeats}
}

// ClientRatios are ours / the real client's, figure by figure: 2.0 means
// our load made twice as many; unknown where either is unknown or the
// real client's is 0.
type ClientRatios struct {
	RecvCallsPer2MiB  Figure `json:"recv_calls_per_2mib"`
	RecvEAGAINPer2MiB Figure `json:"recv_eagain_per_2mib"`
	WakeupsPer2MiB    Figure `json:"wakeups_per_2mib"`
	CPUMsPer2MiB      Figure `json:"cpu_ms_per_2mib"`
	ThroughputBps     Figure `json:"throughput_bps"`
}

// Ratios divides ours by real.
func (ours ClientFigures) Ratios(real ClientFigures) ClientRatios {
	return ClientRatios{
		RecvCallsPer2MiB:  Ratio(real.RecvCallsPer2MiB, ours.RecvCallsPer2MiB),
		RecvEAGAINPer2MiB: Ratio(real.RecvEAGAINPer2MiB, ours.RecvEAGAINPer2MiB),
		WakeupsPer2MiB:    Ratio(real.WakeupsPer2MiB, ours.WakeupsPer2MiB),
		CPUMsPer2MiB:      Ratio(real.CPUMsPer2MiB, ours.CPUMsPer2MiB),
		ThroughputBps:     Ratio(real.ThroughputBps, ours.ThroughputBps),
	}
}

// CalibrationRow is one buffer: the server's send buffer requested and
// as its data socket had it, both clients' figures and ours / real.
type CalibrationRow struct {
	Buffer    string        `json:"buffer"`
	Effective int           `json:"effective"` // 0 when not seen
	Ours      ClientFigures `json:"ours"`
	Real      ClientFigures `json:"real"`
	// Ratio is ours / real for each figure.
	Ratio ClientRatios `json:"ratio"`
	// RecvCalls is ours / real of receive calls per 2 MiB over all the
	// repeats, with its 95% interval: what Agreement judges by (the
	// Ratio above is of each client's median run, by time).
	RecvCalls Difference `json:"recv_calls_difference"`
	// CallsNA says why the real client's calls are unknown, when they are.
	CallsNA *Reason `json:"calls_na,omitempty"`
	// OtherCoresBusy is the most other processes kept busy during any of
	// the row's measurements, ours and the real client's (nil: not
	// measured), as a sweep row's.
	OtherCoresBusy *Figure `json:"other_cores_busy,omitempty"`
}

// CalibrationReport is a whole calibration, as calibrate prints it.
type CalibrationReport struct {
	Version  int       `json:"version"`
	Nbdscope string    `json:"nbdscope_version"`
	Time     time.Time `json:"time"`
	// Server is the real server's command, "" for nbdscope's own.
	Server string `json:"server"`
	// Client is the real client's command, placeholders as given.
	Client string `json:"client"`
	Bytes  int64  `json:"bytes"`
	// Repeat is the most repeats per client and buffer (Looks.Most); each
	// row's clients say how many they took.
	Repeat int `json:"repeat"`
	// Looks is when the rows were judged (a look every Looks.Every
	// repeats); Confidence each look's level, 0.95 for one look.
	Looks LookPlan `json:"looks"`
	// OutOfTime says the calibration stopped at a look past its plan's
	// time budget, with a buffer still undecided, before its most repeats.
	OutOfTime  bool             `json:"out_of_time,omitempty"`
	Confidence float64          `json:"confidence"`
	Config     Config           `json:"config"`
	Rows       []CalibrationRow `json:"rows"`
	Partial    bool             `json:"partial"`
	// PartialReason says why the report is partial.
	PartialReason string `json:"partial_reason,omitempty"`
}

// The band within which our load is said to read like the real client:
// its receive calls per 2 MiB within ±25% or so of the real client's
// (issue 35: 0.75–1.33x, a ratio and its inverse).
const (
	AgreeLow  = 0.75
	AgreeHigh = 1.33
)

// Agreement is what a row's receive calls per 2 MiB, ours / real, say of
// the band, by the one noise rule (Difference: Welch's test and the
// ratio's 95% interval over the repeats of each client).
type Agreement int

const (
	// AgreeNA: either client's calls were not counted.
	AgreeNA Agreement = iota
	// AgreeWithin: the ratio's interval lies inside the band (with one
	// repeat of a client, no interval: the ratio itself does).
	AgreeWithin
	// AgreeOutside: the interval lies wholly outside the band (or the
	// ratio, with one repeat).
	AgreeOutside
	// AgreeUndecided: the interval straddles an edge of the band: the
	// repeats swing too far to say. Against a server as quick as both
	// clients, whether a reader finds whole replies queued or trails the
	// sender settles early in each run: qemu-img itself made 9.5–24.4
	// receive calls per 2 MiB minutes apart on this project's VM.
	AgreeUndecided
)

// Agreement judges the row (see Agreement).
func (r CalibrationRow) Agreement() Agreement {
	x := r.Ratio.RecvCallsPer2MiB
	if !x.Known() {
		return AgreeNA
	}
	in := func(v float64) bool { return v >= AgreeLow && v <= AgreeHigh }
	d := r.RecvCalls
	if !d.Known() || math.IsNaN(d.Lo) || math.IsNaN(d.Hi) {
		if in(float64(x)) {
			return AgreeWithin
		}
		return AgreeOutside
	}
	switch {
	case in(d.Lo) && in(d.Hi):
		return AgreeWithin
	case d.Hi < AgreeLow || d.Lo > AgreeHigh:
		return AgreeOutside
	}
	return AgreeUndecided
}

// RecvCallsDifference judges our load's receive calls per 2 MiB against
// the real client's, one measurement a repeat each (the rows of each
// client's sweep): ours / real with its interval at conf (a LookPlan's
// Confidence).
func RecvCallsDifference(ours, real []SweepRow, conf float64) Difference {
	calls := func(rows []SweepRow) stats.Summary {
		xs := make([]float64, 0, len(rows))
		for _, r := range rows {
			if c := r.Figures.Client.RecvCallsPer2MiB; c.Known() {
				xs = append(xs, float64(c))
			}
		}
		return stats.Of(xs)
	}
	return DifferenceAt(calls(real), calls(ours), conf)
}

// LookPlan is when a calibration judges its rows: after every Every
// rounds (a measurement of each client at each buffer still measured),
// up to Most. A buffer whose agreement is then decided (within, OUTSIDE
// or n/a) is measured no more; the calibration ends when none is left,
// at Most, or at the first look after BudgetS seconds (0: none). Each
// look's interval is at the plan's Confidence, so that the looks
// together are as sure as one 95% interval (stats.RepeatedConfidence):
// stopping at the first answer does not make a lucky answer likelier,
// and neither does stopping for the time, which the figures do not steer.
type LookPlan struct {
	Every   int     `json:"every"`
	Most    int     `json:"most"`
	BudgetS float64 `json:"budget_s,omitempty"`
}

// AutoLooks is --repeat auto: a look every 10 repeats, at most 100, and
// none begun after 5 minutes. The calls of either client swing 25–45%
// from run to run against our server (the regimes above), so at 10
// repeats the interval of a ratio near 1 is about ±30%, too wide for the
// band; at 30–50 a ratio within 10% of 1 fits, and one nearer an edge
// takes up to 100 (about 2 minutes against our server; a round against
// qemu-nbd takes about 8 s, hence the budget).
var AutoLooks = LookPlan{Every: 10, Most: 100, BudgetS: 300}

// FixedLooks is --repeat n: one look, after n repeats, at 95%.
func FixedLooks(n int) LookPlan { return LookPlan{Every: n, Most: n} }

// Looks is how many looks the plan takes at most.
func (p LookPlan) Looks() int {
	if p.Every < 1 {
		return 0
	}
	return p.Most / p.Every
}

// Valid says the plan can run: a look at least, every one within
// stats.MaxLooks, Most a whole number of steps.
func (p LookPlan) Valid() bool {
	return p.Every >= 1 && p.Most >= p.Every && p.Most%p.Every == 0 && p.Looks() <= stats.MaxLooks
}

// IsLook says the round (counted from 1) is one the plan looks after.
func (p LookPlan) IsLook(round int) bool {
	return p.Every >= 1 && round%p.Every == 0 && round <= p.Most
}

// Confidence is each look's level.
func (p LookPlan) Confidence() float64 { return stats.RepeatedConfidence(p.Looks()) }

// Decided says a row needs no more repeats: its agreement is within,
// OUTSIDE or n/a.
func (r CalibrationRow) Decided() bool { return r.Agreement() != AgreeUndecided }
