package main

import (
	"fmt"

	"nbdscope/probe/realproc"
	"nbdscope/probe/syscount"
)

// doctorCalls says whether a real process's system calls can be counted
// here (an exec side's client, a real server): doctor's line and its JSON.
type doctorCalls struct {
	OK  bool   `json:"ok"`
	Why string `json:"why,omitempty"`
	Fix string `json:"fix,omitempty"`
	// How they are counted, and why not per process when per thread
	// (which costs a client that waits often 10-25% more CPU).
	How              string `json:"how,omitempty"`
	WhyNotPerProcess string `json:"why_not_per_process,omitempty"`
	// Cost is what counting adds to each socket call here (null with
	// CostNA saying why when it could not be measured).
	Cost   *doctorCallCost `json:"cost"`
	CostNA string          `json:"cost_na,omitempty"`
	// VerifierLog is the kernel verifier's log where it refused a
	// counting program.
	VerifierLog string `json:"verifier_log,omitempty"`
}

// doctorCallCost is realproc.CallCost in the JSON.
type doctorCallCost struct {
	NsPerCall float64 `json:"ns_per_call"` // CPU added to each call
	Ratio     float64 `json:"ratio"`       // counted loop's CPU over the bare loop's
	Calls     int     `json:"calls"`       // calls timed each way
}

// callCost measures what counting costs a socket call here.
func callCost() (*doctorCallCost, string) {
	c, err := realproc.MeasureCallCost()
	if err != nil {
		why, _ := realproc.NA(err)
		return nil, why
	}
	return &doctorCallCost{NsPerCall: float64(c.PerCall.Nanoseconds()), Ratio: c.Ratio, Calls: c.Calls}, ""
}

func probeCalls() doctorCalls {
	how, why, err := realproc.ProbeMechanism() // one probe: each opens a counter and may load the bpf programs
	if err == nil {
		c := doctorCalls{OK: true, How: how, WhyNotPerProcess: why, VerifierLog: syscount.RefusedLog()}
		c.Cost, c.CostNA = callCost()
		return c
	}
	why, fix := realproc.NA(err)
	return doctorCalls{Why: why, Fix: fix, VerifierLog: syscount.RefusedLog()}
}

// callsLine is doctor's line for it.
func callsLine(c doctorCalls) string {
	if c.OK {
		s := "✓ real clients and servers: their socket calls are counted exactly, " + c.How
		if c.WhyNotPerProcess != "" {
			s += "\n  per thread costs a process that waits often 10-25% more CPU; per process is not possible: " + c.WhyNotPerProcess
		}
		return s + "\n  " + costLine(c) + verifierText(c.VerifierLog)
	}
	s := "✗ real clients and servers: their socket calls are n/a: " + c.Why
	if c.Fix != "" {
		s += "\n  fix: " + c.Fix
	}
	return s + verifierText(c.VerifierLog)
}

// costLine says what counting costs a socket call here, measured.
func costLine(c doctorCalls) string {
	if c.Cost == nil {
		return "what counting costs a call: n/a (" + c.CostNA + ")"
	}
	return fmt.Sprintf("counting costs each socket call %.0f ns of CPU here (a 1-byte write and read loop: %.2fx its bare CPU, %d calls timed each way)",
		c.Cost.NsPerCall, c.Cost.Ratio, c.Cost.Calls)
}
