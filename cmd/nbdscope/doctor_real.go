package main

import (
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
	// VerifierLog is the kernel verifier's log where it refused a
	// counting program.
	VerifierLog string `json:"verifier_log,omitempty"`
}

func probeCalls() doctorCalls {
	how, why, err := realproc.ProbeMechanism() // one probe: each opens a counter and may load the bpf programs
	if err == nil {
		return doctorCalls{OK: true, How: how, WhyNotPerProcess: why, VerifierLog: syscount.RefusedLog()}
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
		return s + verifierText(c.VerifierLog)
	}
	s := "✗ real clients and servers: their socket calls are n/a: " + c.Why
	if c.Fix != "" {
		s += "\n  fix: " + c.Fix
	}
	return s + verifierText(c.VerifierLog)
}
