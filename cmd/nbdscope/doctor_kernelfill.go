package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"nbdscope/probe/syscount"
)

// doctor's kernel programs: whether the send-buffer fill is measured in
// the kernel here (syscount.FillMeter) or sampled from user space, and,
// when the kernel refused a program (a fill one, or a counting one in
// the calls probe), the verifier's own log, which says at which
// instruction and why.

// doctorKernelFill is its JSON ("kernel_fill").
type doctorKernelFill struct {
	OK          bool   `json:"ok"`
	Why         string `json:"why,omitempty"`
	VerifierLog string `json:"verifier_log,omitempty"`
	// Cost is what the programs add to a socket call here (null with
	// CostNA saying why when it could not be measured).
	Cost   *doctorFillCost `json:"cost,omitempty"`
	CostNA string          `json:"cost_na,omitempty"`
	// Timer is what the timer's programs take a tick, reading a run's
	// fewest and most sockets, and a send call (null with TimerNA saying
	// why when it could not be measured).
	Timer   []doctorTickCost `json:"timer,omitempty"`
	TimerNA string           `json:"timer_na,omitempty"`
	// Found is how the timer finds a watched socket (null with TimerNA
	// when the timer's cost could not be measured).
	Found *doctorFound `json:"found,omitempty"`
}

// doctorFound is how the timer finds a watched socket: By "iterator"
// (when watched, by an iterator over unix sockets, whose one run took
// IterNs of CPU over IterVisits runs of its program) or "send" (at the
// socket's next send call, IteratorNA saying why not the iterator).
// FindAtSendCalls says whether the find program runs at every send call
// once the sockets are watched: not where the iterator found them all.
type doctorFound struct {
	By              string   `json:"by"`
	IteratorNA      string   `json:"iterator_na,omitempty"`
	IterNs          *float64 `json:"iterator_ns_per_run"`
	IterVisits      uint64   `json:"iterator_visits"`
	FindAtSendCalls bool     `json:"find_at_send_calls"`
}

// doctorTickCost is the timer's cost watching Sockets sockets, from the
// kernel's own accounting of the programs' time (BPF_ENABLE_STATS): the
// tick program's ns a run and the find program's ns a send call.
type doctorTickCost struct {
	Sockets        int     `json:"sockets"`
	TickNs         float64 `json:"tick_ns"`
	Ticks          uint64  `json:"ticks"`
	TicksPerSecond float64 `json:"ticks_per_second"`
	FindNs         float64 `json:"find_ns_per_send_call"`
	Finds          uint64  `json:"send_calls"`
}

// timerCostSockets are the sockets a run's timer reads at the least (one
// connection a side) and at the most (16 a side); timerCostFor is how
// long each is measured.
var timerCostSockets = []int{2, 32}

const timerCostFor = 300 * time.Millisecond

// measureTimerCost measures the timer's cost at each of timerCostSockets,
// and says how it found the sockets (at the last).
func measureTimerCost() ([]doctorTickCost, *doctorFound, error) {
	var out []doctorTickCost
	var found *doctorFound
	for _, n := range timerCostSockets {
		c, err := syscount.MeasureFillTimer(n, timerCostFor)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, doctorTickCost{Sockets: c.Sockets, TickNs: c.TickNs, Ticks: c.Ticks, TicksPerSecond: c.TicksPerSecond, FindNs: c.FindNs, Finds: c.Finds})
		found = &doctorFound{By: c.FoundBy, IteratorNA: c.NotByIterator, IterVisits: c.IterVisits, FindAtSendCalls: c.FindAtSends}
		if c.IterVisits > 0 {
			found.IterNs = &c.IterNs
		}
	}
	return out, found, nil
}

// doctorFillCost is what the fill programs add to each socket call, in
// CPU ns: a watched socket's (a side's data sockets), and any other's
// (every socket call on the machine while they are loaded). A figure the
// timed loop cannot tell from its own noise (under ResolutionNs) is null,
// never 0, with its BelowResolution flag set.
type doctorFillCost struct {
	WatchedNs      *float64 `json:"watched_ns_per_call"`
	WatchedBelow   bool     `json:"watched_below_resolution"`
	BystanderNs    *float64 `json:"other_ns_per_call"`
	BystanderBelow bool     `json:"other_below_resolution"`
	ResolutionNs   float64  `json:"resolution_ns_per_call"`
	Calls          int      `json:"calls"`
}

// fillCostRoundCount and fillCostOps: 3 rounds of 20,000 write-read
// pairs each of the three ways (none loaded, loaded, watching), the
// programs loaded once a round: about a third of a second at 1-2 µs a
// call.
const (
	fillCostRoundCount = 3
	fillCostOps        = 20000
)

// fillCostRounds are the timed loop's rounds, each of the same calls:
// bare (no programs loaded), with the programs loaded (bystander), and
// watching the loop's socket.
type fillCostRounds struct{ bare, bystander, watched []time.Duration }

// cost is what the programs add to a call, over rounds of callsPerRound
// calls each. The loop's resolution is the spread of its bare rounds
// (the slowest less the fastest, a call's share), at least a
// nanosecond: a difference under it is the loop's own noise, as likely
// as a cost (the timer's find program, 140-220 ns a send call by the
// kernel's own accounting, read 0 beside bare rounds that moved more).
func (r fillCostRounds) cost(callsPerRound int) *doctorFillCost {
	calls := callsPerRound * len(r.bare)
	c := &doctorFillCost{Calls: calls, ResolutionNs: 1}
	if len(r.bare) == 0 {
		return c
	}
	lo, hi := slices.Min(r.bare), slices.Max(r.bare)
	c.ResolutionNs = max(1, float64((hi-lo).Nanoseconds())/float64(callsPerRound))
	bare := sumDurations(r.bare)
	per := func(on []time.Duration) (*float64, bool) {
		ns := float64((sumDurations(on) - bare).Nanoseconds()) / float64(calls)
		if ns < c.ResolutionNs {
			return nil, true
		}
		return &ns, false
	}
	c.WatchedNs, c.WatchedBelow = per(r.watched)
	c.BystanderNs, c.BystanderBelow = per(r.bystander)
	return c
}

func sumDurations(ds []time.Duration) (t time.Duration) {
	for _, d := range ds {
		t += d
	}
	return t
}

// openFillMeter loads the fill programs; tests replace it.
var openFillMeter = syscount.OpenFillMeter

// verifierLogLines is how much of a verifier's log doctor prints: its end.
const verifierLogLines = 20

func probeKernelFill() doctorKernelFill {
	m, err := openFillMeter()
	if err != nil {
		return doctorKernelFill{Why: err.Error(), VerifierLog: syscount.VerifierLog(err, verifierLogLines)}
	}
	m.Close()
	k := doctorKernelFill{OK: true}
	if k.Cost, err = measureFillCost(); err != nil {
		k.CostNA = err.Error()
	}
	if k.Timer, k.Found, err = measureTimerCost(); err != nil {
		k.TimerNA = err.Error()
	}
	return k
}

// kernelFillLine is doctor's line for it.
func kernelFillLine(k doctorKernelFill) string {
	if k.OK {
		return "✓ send-buffer fill: measured in the kernel, each unix sender's level read by a timer (TCP's is sampled)\n  " + foundLine(k.Found) + "\n  " + timerCostLine(k) + "\n  " + fillCostLine(k)
	}
	return "✗ send-buffer fill in the kernel: n/a, sampled from user space instead: " + k.Why + verifierText(k.VerifierLog)
}

// verifierText is a verifier's log as doctor's lines under a refusal
// ("" without one).
func verifierText(log string) string {
	if log == "" {
		return ""
	}
	return "\n  the kernel's verifier said:\n    " + strings.ReplaceAll(log, "\n", "\n    ")
}

// foundLine says how the timer finds a watched socket, and so from when
// it measures it.
func foundLine(f *doctorFound) string {
	switch {
	case f == nil:
		return "how the fill timer finds a watched socket: n/a (its cost could not be measured)"
	case f.By == syscount.FoundByIterator:
		run := ""
		if f.IterNs != nil {
			run = fmt.Sprintf("%.0f ns of CPU a run over %d unix sockets here; ", *f.IterNs, max(f.IterVisits, 1)-1)
		}
		return "a socket is measured from the moment it is watched: an iterator over unix sockets finds it (" + run +
			"a socket of another network namespace is found at its next send call, by a program at send calls that is on only while such a socket is watched: " + findOnText(f.FindAtSendCalls) + ")"
	}
	return "a socket is measured from its next send call after it is watched, where that call finds it: an idle sender, or a server stuck with its buffer full, reads as nothing until then (no iterator over unix sockets: " + f.IteratorNA + ")"
}

// findOnText says whether the find program was on with doctor's
// sockets watched.
func findOnText(on bool) string {
	if on {
		return "on here, with doctor's sockets watched"
	}
	return "off with doctor's sockets watched, so no send call paid for it"
}

// timerCostLine says what the timer's programs take a tick and a send
// call here.
func timerCostLine(k doctorKernelFill) string {
	if len(k.Timer) == 0 {
		return "what the fill timer costs: n/a (" + k.TimerNA + ")"
	}
	var ticks []string
	for _, c := range k.Timer {
		ticks = append(ticks, fmt.Sprintf("%.0f ns of CPU a tick reading %d sockets (%.2f%% of a core at %.0f ticks a second)", c.TickNs, c.Sockets, c.TickNs*c.TicksPerSecond/1e7, c.TicksPerSecond))
	}
	last := k.Timer[len(k.Timer)-1]
	return fmt.Sprintf("the fill timer's programs take %s, and %.0f ns a send call to find a watched socket while that program is on (the kernel's accounting of the programs' own time, over %d ticks and %d send calls; the timer interrupt around a tick is not in it, and the timers run only while a side is watched)",
		strings.Join(ticks, " and "), last.FindNs, last.Ticks, last.Finds)
}

// fillCostLine says what the fill programs cost a socket call here,
// measured, as costLine says counting's.
func fillCostLine(k doctorKernelFill) string {
	if k.Cost == nil {
		return "what the fill programs cost a call: n/a (" + k.CostNA + ")"
	}
	c := k.Cost
	return fmt.Sprintf("the fill programs cost each call on a side's data sockets %s here, and any other socket call %s (a 1-byte write and read loop, %d calls timed each way; it tells apart %.0f ns a call, the spread of its bare rounds)",
		loopCostText(c.WatchedNs), loopCostText(c.BystanderNs), c.Calls, c.ResolutionNs)
}

// loopCostText words a cost per call the timed loop measured: nil is a
// difference under the loop's resolution, not a cost of 0.
func loopCostText(ns *float64) string {
	if ns == nil {
		return "too little for the loop to tell apart from its own noise"
	}
	return fmt.Sprintf("%.0f ns of CPU", *ns)
}
