package interop

// A real client as a live side: run --exec-b (issue 15 §2).

import (
	"testing"

	"nbdscope/model"
	"nbdscope/probe/syscount"
)

// TestRunExecSideQemuImg: qemu-img convert runs in a loop as side B's load
// for a few seconds while B's server send buffer goes from the default to
// 2m. The samples carry the server's figures and the client's CPU (its
// calls are unknown, not 0; its errors and consumed null), finished runs are events, and the server's
// send calls per 2 MiB fall with the larger buffer (a ratio of counts,
// checked where the kernel let the buffer grow).
func TestRunExecSideQemuImg(t *testing.T) {
	need(t, "qemu-img")
	cmd := `qemu-img convert -f raw -O raw -W -n {uri} 'json:{"file":{"driver":"null-co","size":268435456}}'`
	rep, r := runReport(t, 0, "--exec-b", cmd, "--size-b", "256m", "--sndbuf-b", "default",
		"--duration", "8s", "--at", "4s:b.sndbuf=2m")
	var before, after struct {
		calls, bytes uint64
		eff          int
	}
	cpu := 0.0
	for _, s := range rep.Samples {
		if s.Side != "B" || !s.Active || s.Bytes == 0 {
			continue
		}
		if s.Server == nil {
			t.Fatalf("B sample at %.1fs has no server figures", s.T)
		}
		if s.Errors != nil { // JSON null: a real client's requests are not seen
			t.Errorf("B sample at %.1fs: errors %d, want null (not seen)", s.T, *s.Errors)
		}
		if counted := syscount.Probe() == nil; s.Client.RecvCallsPer2MiB.Known() != counted {
			t.Errorf("B sample at %.1fs: the real client's receive calls %v, want them counted: %v (syscount.Probe)", s.T, s.Client.RecvCallsPer2MiB, counted)
		}
		cpu += float64(s.Client.UserS + s.Client.SysS)
		if s.Changed {
			continue
		}
		side := &before
		if s.Settings.SndBuf == "2m" {
			side = &after
		}
		side.calls += s.Server.SendCalls
		side.bytes += s.Bytes
		side.eff = s.SndBuf.ServerEffective
	}
	if c := rep.Sides[1].Summary.Consumed; c != nil { // JSON null: our consume mode never ran on B
		t.Errorf("B's summary: consumed %+v, want null (a real client was the load)", *c)
	}
	if rep.Sides[0].Summary.Consumed == nil || rep.Sides[0].Summary.Errors == nil {
		t.Errorf("A's summary (our load): consumed %v, errors %v, want both measured", rep.Sides[0].Summary.Consumed, rep.Sides[0].Summary.Errors)
	}
	if before.bytes == 0 || after.bytes == 0 || cpu <= 0 {
		t.Fatalf("want active B samples before and after the change and the client's CPU: before %+v, after %+v, cpu %v\n%s",
			before, after, cpu, r.stderr)
	}
	runs := 0
	for _, e := range rep.Events {
		if e.Side == "B" && e.Setting == model.ExecRunEvent {
			runs++
		}
	}
	if runs == 0 {
		t.Errorf("no finished client run reported as an event: %+v", rep.Events)
	}
	b := model.CallsPer2MiB(before.calls, before.bytes)
	a := model.CallsPer2MiB(after.calls, after.bytes)
	if after.eff >= 2*before.eff && a >= b {
		t.Errorf("server send calls per 2 MiB %.2f at 2m (%d) not below %.2f at the default (%d)", a, after.eff, b, before.eff)
	}
	t.Logf("server send calls per 2 MiB: %.2f at default (%d), %.2f at 2m (%d); %d runs", b, before.eff, a, after.eff, runs)
}
