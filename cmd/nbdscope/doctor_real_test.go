package main

import (
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
