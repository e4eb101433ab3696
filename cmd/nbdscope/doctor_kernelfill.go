package main

import (
	"fmt"
	"strings"

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
	return k
}

// kernelFillLine is doctor's line for it.
func kernelFillLine(k doctorKernelFill) string {
	if k.OK {
		return "✓ send-buffer fill: measured in the kernel at every change of a unix sender's buffer (TCP's is sampled)\n  " + fillCostLine(k)
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

// fillCostLine says what the fill programs cost a socket call here,
// measured, as costLine says counting's.
func fillCostLine(k doctorKernelFill) string {
	if k.Cost == nil {
		return "what the fill programs cost a call: n/a (" + k.CostNA + ")"
	}
	return fmt.Sprintf("the fill programs cost each call on a side's data sockets %.0f ns of CPU here, and any other socket call %.0f ns (a 1-byte write and read loop, %d calls timed each way)",
		k.Cost.WatchedNs, k.Cost.BystanderNs, k.Cost.Calls)
}
