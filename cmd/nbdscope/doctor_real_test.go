package main

import (
	"strings"
	"testing"

	"nbdscope/probe/realproc"
)

// TestDoctorProbesCountingOnce: doctor's line on counting real
// processes probes once, and tries the bpf programs at most once: it
// probed in realproc.Probe and again in realproc.Mechanism, and with
// NBDSCOPE_SYSCOUNT=bpf loaded the programs twice.
func TestDoctorProbesCountingOnce(t *testing.T) {
	for _, env := range []string{"", "bpf", "perf"} {
		t.Run("env="+env, func(t *testing.T) {
			t.Setenv(realproc.CountingEnv, env)
			probed, tried := realproc.Probes()
			c := probeCalls()
			p, b := realproc.Probes()
			if p-probed != 1 || b-tried > 1 {
				t.Errorf("doctor probed counting %d times and tried the bpf programs %d times, want once and at most once (%+v)", p-probed, b-tried, c)
			}
		})
	}
}

// doctor's counting line says what a counted call costs, or n/a with why.
func TestCallsLineCost(t *testing.T) {
	c := doctorCalls{OK: true, How: "per process", Cost: &doctorCallCost{NsPerCall: 37, Ratio: 1.02, Calls: 200000}}
	if got := callsLine(c); !strings.Contains(got, "counting costs each socket call 37 ns of CPU here (a 1-byte write and read loop: 1.02x") {
		t.Errorf("line %q", got)
	}
	c.Cost, c.CostNA = nil, "no socketpair"
	if got := callsLine(c); !strings.Contains(got, "what counting costs a call: n/a (no socketpair)") {
		t.Errorf("line %q", got)
	}
}
