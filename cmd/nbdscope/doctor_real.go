package main

import (
	"nbdscope/realproc"
)

// doctorCalls says whether a real process's system calls can be counted
// here (an exec side's client, a real server): doctor's line and its JSON.
type doctorCalls struct {
	OK  bool   `json:"ok"`
	Why string `json:"why,omitempty"`
	Fix string `json:"fix,omitempty"`
}

func probeCalls() doctorCalls {
	err := realproc.Probe()
	if err == nil {
		return doctorCalls{OK: true}
	}
	why, fix := realproc.NA(err)
	return doctorCalls{Why: why, Fix: fix}
}

// callsLine is doctor's line for it.
func callsLine(c doctorCalls) string {
	if c.OK {
		return "✓ real clients and servers: their socket calls are counted exactly (perf syscall tracepoints)"
	}
	s := "✗ real clients and servers: their socket calls are n/a: " + c.Why
	if c.Fix != "" {
		s += "\n  fix: " + c.Fix
	}
	return s
}
