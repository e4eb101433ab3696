package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"nbdscope/probe/syscount"
)

// TestDoctorShowsVerifierLog: a program the kernel's verifier refuses (it
// returns without setting its result, r0) has doctor print the verifier's own
// log under the refusal, where it said only that loading failed.
func TestDoctorShowsVerifierLog(t *testing.T) {
	_, refused := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "refused", Type: ebpf.TracePoint, License: "GPL",
		Instructions: asm.Instructions{asm.Return()}})
	if refused == nil {
		t.Fatal("the verifier took a program that returns without setting its result")
	}
	log := syscount.VerifierLog(refused, verifierLogLines)
	if log == "" {
		t.Skipf("no verifier log here (no BPF rights?): %v", refused)
	}
	old := openFillMeter
	t.Cleanup(func() { openFillMeter = old })
	openFillMeter = func() (*syscount.FillMeter, error) {
		return nil, fmt.Errorf("loading bpf program fill_send: %w", refused)
	}
	t.Setenv(asBinaryEnv, "1") // the fill probe's children are this test binary
	code, out, errs := runApp(t, "doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, errs)
	}
	last := log[strings.LastIndex(log, "\n")+1:]
	if !strings.Contains(out, "✗ send-buffer fill in the kernel") || !strings.Contains(out, "the kernel's verifier said:") || !strings.Contains(out, last) {
		t.Errorf("doctor's output lacks the verifier's log (its last line %q):\n%s", last, out)
	}
	t.Logf("verifier's log:\n%s", log)
}

// TestDoctorSaysFillCost: where the fill programs load, doctor measures
// what they cost a socket call, a watched socket's and any other's, and
// says it beside counting's cost, in its JSON too.
func TestDoctorSaysFillCost(t *testing.T) {
	k := probeKernelFill()
	if !k.OK {
		t.Skipf("the fill programs do not load here: %s", k.Why)
	}
	if k.Cost == nil {
		t.Fatalf("no cost measured: %s", k.CostNA)
	}
	if c := k.Cost; c.Calls != 2*fillCostOps*fillCostRoundCount || c.ResolutionNs < 1 || (c.WatchedNs == nil) != c.WatchedBelow || (c.BystanderNs == nil) != c.BystanderBelow {
		t.Errorf("cost %+v", *c)
	}
	line := kernelFillLine(k)
	if !strings.Contains(line, "the fill programs cost each call on a side's data sockets") || !strings.Contains(line, "any other socket call") {
		t.Errorf("doctor's fill line does not say the cost:\n%s", line)
	}
	if len(k.Timer) != len(timerCostSockets) {
		t.Fatalf("no timer cost measured: %s", k.TimerNA)
	}
	for _, c := range k.Timer {
		// 1000 ticks a second over 300 ms: about 300.
		if c.Ticks < 150 || c.Ticks > 600 || c.TickNs <= 0 || c.Finds == 0 || c.FindNs <= 0 {
			t.Errorf("timer cost %+v", c)
		}
	}
	if f := k.Found; f == nil || (f.By == syscount.FoundByIterator) != (f.IterNs != nil) || (f.By == syscount.FoundBySend) != (f.IteratorNA != "") || (f.By == syscount.FoundBySend && !f.FindAtSendCalls) {
		t.Errorf("how the timer finds its sockets: %+v", f)
	}
	if !strings.Contains(line, "the fill timer's programs take") || !strings.Contains(line, "a tick reading 32 sockets") || !strings.Contains(line, "a socket is measured from") {
		t.Errorf("doctor's fill line does not say the timer's cost:\n%s", line)
	}
	t.Logf("%s", line)
	other := 205.0
	k.Cost.WatchedNs, k.Cost.BystanderNs = nil, &other
	if line := kernelFillLine(k); !strings.Contains(line, "data sockets too little for the loop to tell apart from its own noise here") || !strings.Contains(line, "any other socket call 205 ns of CPU") {
		t.Errorf("a cost under the loop's resolution, and one over it:\n%s", line)
	}
	k.Cost, k.CostNA = nil, "no socketpair"
	if line := kernelFillLine(k); !strings.Contains(line, "what the fill programs cost a call: n/a (no socketpair)") {
		t.Errorf("doctor's fill line without a cost:\n%s", line)
	}
}
