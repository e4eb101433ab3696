package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// Figures.Add: counts add up and the per-2-MiB figures are derived again.
func TestFiguresAdd(t *testing.T) {
	mk := func(bytes uint64, recv, vcs uint64, wl Workload) Figures {
		c := Counters{VolCS: vcs, MinFlt: 2 * vcs, UserS: 0.5}
		c.IO.RecvCalls, c.IO.RecvEAGAIN, c.IO.SendEAGAIN = recv, recv/2, 1
		sp := ProcessFigures(Counters{}, bytes, 1)
		return Figures{Settings: Stamp{Workload: wl}, Bytes: bytes, Seconds: 1, Client: ProcessFigures(c, bytes, 1), Server: &sp}
	}
	sum := mk(PayloadUnit, 10, 4, WorkRead).Add(mk(3*PayloadUnit, 2, 0, WorkRead))
	if sum.Bytes != 4*PayloadUnit || sum.Client.RecvCalls != 12 || sum.Client.RecvCallsPer2MiB != 3 ||
		sum.Client.VolCSPer2MiB != 1 || sum.Client.FaultsPer2MiB != 2 || sum.Client.Faults != 8 || sum.Client.RecvEAGAINPer2MiB != 1.5 || sum.Client.SendEAGAINPer2MiB != 0.5 ||
		sum.Client.EAGAINPer2MiB != 2 || sum.Client.UserS != 1 || sum.ThroughputBps != Figure(2*PayloadUnit) || sum.Changed {
		t.Errorf("sum %+v", sum)
	}
	if mixed := mk(PayloadUnit, 1, 0, WorkRead).Add(mk(PayloadUnit, 1, 0, WorkWrite)); !mixed.Changed || mixed.LatencyP50Ms.Known() {
		t.Errorf("adding a read and a write span: changed %v, p50 %v", mixed.Changed, mixed.LatencyP50Ms)
	}
}

// Adding a read span to a write span: the receiver of the bulk data was
// the client, then the server, so "the receiver's" figures of the sum
// would mix two processes' calls (the client's replies of the writes, the
// server's data of the reads): unknown, with the reason, while each
// process's own figures add up as they are. The sender's buffer fill is
// two buffers' too.
func TestFiguresAddAcrossReceivers(t *testing.T) {
	span := func(wl Workload, cliRecv, srvRecv uint64) Figures {
		var c, s Counters
		c.IO.RecvCalls, c.IO.SendCalls, c.IO.RecvEAGAIN = cliRecv, 4, cliRecv/2
		s.IO.RecvCalls, s.IO.SendCalls, s.IO.SendEAGAIN = srvRecv, 4, 2
		sp := ProcessFigures(s, PayloadUnit, 1)
		f := Figures{Settings: Stamp{Workload: wl}, Bytes: PayloadUnit, Seconds: 1, Client: ProcessFigures(c, PayloadUnit, 1), Server: &sp}
		f.SetFill(Fill{Samples: 10, FullPct: 50, EmptyPct: 10, Bytes: 1000, Limit: 4000})
		return f
	}
	rd, wr := span(WorkRead, 20, 2), span(WorkWrite, 2, 30)
	for _, c := range []struct {
		name             string
		sum              Figures
		cliRecv, srvRecv uint64
	}{{"read+write", rd.Add(wr), 22, 32}, {"write+read", wr.Add(rd), 22, 32}, {"read+write+read", rd.Add(wr).Add(rd), 42, 34}} {
		name, sum := c.name, c.sum
		for fig, v := range map[string]Figure{"receiver calls": sum.ReceiverCallsPer2MiB(), "receiver EAGAIN": sum.ReceiverEAGAINPer2MiB(),
			"sender calls": sum.SenderCallsPer2MiB(), "sender EAGAIN": sum.SenderEAGAINPer2MiB(), "fill": sum.Fill().FullPct} {
			if v.Known() {
				t.Errorf("%s: %s %v, want unknown: the receiver changed", name, fig, v)
			}
		}
		if sum.Client.RecvCalls != c.cliRecv || sum.Server.RecvCalls != c.srvRecv || sum.Client.RecvCallsPer2MiB != CallsPer2MiB(c.cliRecv, sum.Bytes) {
			t.Errorf("%s: per-process counts %d client, %d server recv calls: not the spans' sums", name, sum.Client.RecvCalls, sum.Server.RecvCalls)
		}
	}
	if same := rd.Add(rd); !same.ReceiverCallsPer2MiB().Known() || same.ReceiverCallsPer2MiB() != 20 || !same.Fill().Known() {
		t.Errorf("two read spans: receiver calls %v, fill %+v", same.ReceiverCallsPer2MiB(), same.Fill())
	}
}

// A run saved before figures had these fields reads them as unknown, and
// its samples get the stamp of the run's configuration.
func TestOldReportFiguresUnknown(t *testing.T) {
	var p Process
	if err := json.Unmarshal([]byte(`{"recv_calls_per_2mib": 2, "eagain_per_2mib": 1, "eagain": 5}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.RecvCallsPer2MiB != 2 || p.EAGAINPer2MiB != 1 || p.RecvEAGAINPer2MiB.Known() || p.SendEAGAINPer2MiB.Known() || p.VolCSPer2MiB.Known() || p.FaultsPer2MiB.Known() {
		t.Errorf("old process read as %+v", p)
	}
	rep := Report{Config: DefaultConfig(), Samples: []Sample{{Side: "B"}}, Sides: []SideReport{{Name: "A"}}}
	rep.Config.Sides[1].Workload = WorkWrite
	st := rep.WithStamps()
	if st.Samples[0].Settings.Workload != WorkWrite || ReceiverName(st.Samples[0].Settings.Workload) != "server" ||
		st.Sides[0].Summary.Settings.Workload != rep.Config.Sides[0].Workload || rep.Samples[0].Settings.Workload != "" {
		t.Errorf("stamps %+v / %+v; the original changed: %q", st.Samples[0].Settings, st.Sides[0].Summary.Settings, rep.Samples[0].Settings.Workload)
	}
}

// Errors not seen (a real client's requests) are null in JSON and empty
// in CSV, not 0; a span adds the errors of its parts whose requests were
// seen, and stays unseen only when none were.
func TestErrorsNotSeenAreNull(t *testing.T) {
	unseen := Figures{Bytes: 1, Seconds: 1}
	two := uint64(2)
	seen := Figures{Bytes: 1, Seconds: 1, Errors: &two}
	b, err := json.Marshal(unseen)
	if err != nil || !strings.Contains(string(b), `"errors":null`) {
		t.Errorf("unseen errors marshal as %s, %v; want null", b, err)
	}
	if sum := unseen.Add(unseen); sum.Errors != nil {
		t.Errorf("unseen + unseen = %d errors, want unseen", *sum.Errors)
	}
	if sum := unseen.Add(seen).Add(seen); sum.Errors == nil || *sum.Errors != 4 {
		t.Errorf("unseen + 2 + 2 = %v errors, want 4", sum.Errors)
	}
	var back Figures
	if err := json.Unmarshal([]byte(`{"errors":0}`), &back); err != nil || back.Errors == nil || *back.Errors != 0 {
		t.Errorf("a saved run's errors 0 read back as %v, %v", back.Errors, err)
	}
}

// An exec side whose client read though its workload is write, in
// alternate mode: its first stretch (before its turn) moved nothing, so it
// went no way; the run is a read throughout, not "changed".
func TestSettleFlowsIgnoresStretchesThatMovedNothing(t *testing.T) {
	st := Stamp{Workload: WorkWrite, Exec: "nbdcopy {uri} null:", SndBuf: "2m"}
	st2 := st
	st2.SndBuf = "1m"
	rep := Report{
		Samples: []Sample{
			{T: 0.5, Side: "B", Figures: Figures{Settings: st}},
			{T: 1.5, Side: "B", Active: true, Figures: Figures{Settings: st2, Changed: true, Flow: FlowRead, Bytes: 100}},
			{T: 2.0, Side: "B", Active: true, Figures: Figures{Settings: st2, Flow: FlowRead, Bytes: 100}},
		},
		Sides: []SideReport{{Name: "B", Summary: Summary{Figures: Figures{Settings: st2, Bytes: 200}},
			Segments: []Segment{{From: 0, To: 1.2, Summary: Summary{Figures: Figures{Settings: st}}},
				{From: 1.5, To: 2.0, Summary: Summary{Figures: Figures{Settings: st2, Bytes: 100}}}}}},
	}
	rep.SettleFlows()
	sd := rep.Sides[0]
	if sd.Summary.Direction() != FlowRead || sd.Segments[1].Direction() != FlowRead || sd.Segments[0].Flow != "" || sd.ReceiverChanged() != nil {
		t.Errorf("summary %q, segments %q %q, %+v", sd.Summary.Direction(), sd.Segments[0].Flow, sd.Segments[1].Direction(), sd.ReceiverChanged())
	}
}
