package main

import (
	"fmt"
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

// measureTimerCost measures the timer's cost at each of timerCostSockets.
func measureTimerCost() ([]doctorTickCost, error) {
	var out []doctorTickCost
	for _, n := range timerCostSockets {
		c, err := syscount.MeasureFillTimer(n, timerCostFor)
		if err != nil {
			return nil, err
		}
		out = append(out, doctorTickCost{Sockets: c.Sockets, TickNs: c.TickNs, Ticks: c.Ticks, TicksPerSecond: c.TicksPerSecond, FindNs: c.FindNs, Finds: c.Finds})
	}
	return out, nil
}

// doctorFillCost is what the fill programs add to each socket call, in
// CPU ns: a watched socket's (a side's data sockets), and any other's
// (every socket call on the machine while they are loaded); 0 when
// within the noise.
type doctorFillCost struct {
	WatchedNs   float64 `json:"watched_ns_per_call"`
	BystanderNs float64 `json:"other_ns_per_call"`
	Calls       int     `json:"calls"`
}

// fillCostRounds and fillCostOps: 3 rounds of 20,000 write-read pairs
// each of the three ways (none loaded, loaded, watching), the programs
// loaded once a round: about a third of a second at 1-2 µs a call.
const (
	fillCostRounds = 3
	fillCostOps    = 20000
)

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
	if k.Timer, err = measureTimerCost(); err != nil {
		k.TimerNA = err.Error()
	}
	return k
}

// kernelFillLine is doctor's line for it.
func kernelFillLine(k doctorKernelFill) string {
	if k.OK {
		return "✓ send-buffer fill: measured in the kernel, each unix sender's level read by a timer (TCP's is sampled)\n  " + timerCostLine(k) + "\n  " + fillCostLine(k)
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
	return fmt.Sprintf("the fill timer's programs take %s, and %.0f ns a send call to find a watched socket (the kernel's accounting of the programs' own time, over %d ticks and %d send calls; the timer interrupt around a tick is not in it, and the timers run only while a side is watched)",
		strings.Join(ticks, " and "), last.FindNs, last.Ticks, last.Finds)
}

// fillCostLine says what the fill programs cost a socket call here,
// measured, as costLine says counting's.
func fillCostLine(k doctorKernelFill) string {
	if k.Cost == nil {
		return "what the fill programs cost a call: n/a (" + k.CostNA + ")"
	}
	return fmt.Sprintf("the fill programs cost each call on a side's data sockets %s here, and any other socket call %s (a 1-byte write and read loop, %d calls timed each way)",
		loopCostText(k.Cost.WatchedNs), loopCostText(k.Cost.BystanderNs), k.Cost.Calls)
}

// loopCostText words a cost per call the timed loop measured: under a
// nanosecond (measureFillCost keeps a difference below the bare rounds'
// at 0) is below what the loop can tell, not a cost of 0. The timer's
// find program, 140-220 ns a send call by the kernel's own accounting,
// read so beside rounds that moved more than that.
func loopCostText(ns float64) string {
	if ns < 1 {
		return "too little for the loop to tell apart from its own noise"
	}
	return fmt.Sprintf("%.0f ns of CPU", ns)
}
