package engine

import (
	"encoding/json"
	"testing"
	"time"

	"nbdscope/model"
)

// A workload change mid-run: B's samples switch receiver from the client
// to the server with their own stamp, and B's summary is split into a
// read segment and a write segment (issue 13's bar: --at 4s:b.workload=write).
func TestStampFollowsWorkloadChange(t *testing.T) {
	cfg := testConfig()
	cfg.Interval = model.Duration(250 * time.Millisecond)
	cfg.Duration = model.Duration(6 * time.Second)
	ch := parseAt(t, "4s:b.workload=write")
	cfg.Script = []model.Change{ch}
	p := startPair(t, cfg)
	var samples []model.Sample
	var ev *model.Event
	for u := range p.Updates() {
		if u.Sample != nil && u.Sample.Side == "B" {
			samples = append(samples, *u.Sample)
		}
		if u.Event != nil && u.Event.Setting == model.SetWorkload {
			ev = u.Event
		}
	}
	if ev == nil {
		t.Fatal("no workload event")
	}
	var reads, writes, straddling int
	for _, s := range samples {
		if !s.Active || s.Bytes == 0 {
			continue
		}
		switch {
		case s.Changed:
			straddling++
		case s.Settings.Workload == model.WorkRead:
			if s.T > ev.T+0.3 {
				t.Errorf("sample at %.2fs after the change at %.2fs stamped read", s.T, ev.T)
			}
			if s.Receiver() != &s.Client || s.ReceiverCallsPer2MiB() != s.Client.RecvCallsPer2MiB || s.Client.RecvCalls == 0 {
				t.Errorf("read sample at %.2fs: receiver is not the client (%+v)", s.T, s.Client)
			}
			reads++
		case s.Settings.Workload == model.WorkWrite:
			if s.T < ev.T {
				t.Errorf("sample at %.2fs before the change at %.2fs stamped write", s.T, ev.T)
			}
			if s.Receiver() != s.Server || s.ReceiverCallsPer2MiB() != s.Server.RecvCallsPer2MiB || s.Server.RecvCalls == 0 {
				t.Errorf("write sample at %.2fs: receiver is not the server (%+v)", s.T, s.Server)
			}
			if s.Sender() != &s.Client || s.SenderCallsPer2MiB() != s.Client.SendCallsPer2MiB {
				t.Errorf("write sample at %.2fs: sender is not the client", s.T)
			}
			writes++
		}
	}
	if reads == 0 || writes == 0 || straddling != 1 {
		t.Fatalf("B: %d read samples, %d write samples, %d straddling the change (want 1)", reads, writes, straddling)
	}

	rep := p.Report()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back model.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range []model.Report{rep, back} {
		if n := len(r.Sides[0].Segments); n != 1 || r.Sides[0].Summary.Changed {
			t.Errorf("A (no change): %d segments, changed %v", n, r.Sides[0].Summary.Changed)
		}
		segs := r.Sides[1].Segments
		if len(segs) != 2 || !r.Sides[1].Summary.Changed {
			t.Fatalf("B: %d segments (want 2), changed %v", len(segs), r.Sides[1].Summary.Changed)
		}
		rd, wr := segs[0], segs[1]
		if rd.Settings.Workload != model.WorkRead || model.ReceiverName(rd.Settings.Workload) != "client" ||
			wr.Settings.Workload != model.WorkWrite || model.ReceiverName(wr.Settings.Workload) != "server" {
			t.Errorf("segments stamped %q then %q", rd.Settings.Workload, wr.Settings.Workload)
		}
		if !(rd.From < rd.To && rd.To <= wr.From && wr.From < wr.To) || rd.To > ev.T+0.3 || wr.From < ev.T-0.3 {
			t.Errorf("segments %.2f–%.2f, %.2f–%.2f around the change at %.2f", rd.From, rd.To, wr.From, wr.To, ev.T)
		}
		if rd.ReceiverCallsPer2MiB() != rd.Client.RecvCallsPer2MiB || rd.Client.RecvCalls == 0 || rd.Bytes == 0 {
			t.Errorf("read segment's receiver: %+v", rd.Client)
		}
		if wr.ReceiverCallsPer2MiB() != wr.Server.RecvCallsPer2MiB || wr.Server.RecvCalls == 0 || wr.Bytes == 0 {
			t.Errorf("write segment's receiver: %+v", wr.Server)
		}
		// What the consume mode found is the segment's own: reads are
		// scanned, writes bring nothing back to scan (but the reads that
		// were in flight when the load took the change, a handful).
		if rd.Consume == model.ConsumeScan && (rd.Consumed.ScannedBuffers == 0 || wr.Consumed.ScannedBuffers*100 > rd.Consumed.ScannedBuffers) {
			t.Errorf("scanned buffers: read segment %d, write segment %d", rd.Consumed.ScannedBuffers, wr.Consumed.ScannedBuffers)
		}
		// The run's summary holds both segments and the straddling sample.
		if sum := r.Sides[1].Summary; sum.Bytes < rd.Bytes+wr.Bytes {
			t.Errorf("summary %d bytes < segments %d + %d", sum.Bytes, rd.Bytes, wr.Bytes)
		}
		// Its receiver was the client, then the server: the whole run's
		// receiver figures would mix the two processes' calls, so they
		// are n/a; each process's own add up as they are.
		sum := r.Sides[1].Summary
		if sum.ReceiverCallsPer2MiB().Known() || sum.SenderCallsPer2MiB().Known() || sum.Fill().Known() || sum.ReceiverNA() == nil {
			t.Errorf("B's whole run across read → write: receiver calls %v, sender calls %v, fill %+v, reason %+v",
				sum.ReceiverCallsPer2MiB(), sum.SenderCallsPer2MiB(), sum.Fill(), sum.ReceiverNA())
		}
		if sum.Client.RecvCalls < rd.Client.RecvCalls+wr.Client.RecvCalls || sum.Server.RecvCalls < rd.Server.RecvCalls+wr.Server.RecvCalls {
			t.Errorf("B's whole-run recv calls: client %d, server %d, below the segments' sums", sum.Client.RecvCalls, sum.Server.RecvCalls)
		}
		for _, s := range r.Samples {
			if s.Side == "B" && s.Changed && s.Bytes > 0 && s.ReceiverCallsPer2MiB().Known() {
				t.Errorf("B's interval at %.2fs across the change: receiver calls %v, want n/a", s.T, s.ReceiverCallsPer2MiB())
			}
		}
	}
}

// The cost of a small buffer is a wake-up each time it fills: with the
// server's send buffer at 8 KiB (macos) on A and 2 MiB on B, A's client
// sleeps and wakes more per 2 MiB (a ratio of counts).
func TestWakeupsPer2MiBFollowTheBuffer(t *testing.T) {
	cfg := testConfig()
	cfg.Interval = model.Duration(250 * time.Millisecond)
	cfg.Duration = model.Duration(3 * time.Second)
	cfg.Sides[0].SndBuf, _ = model.ParseBuf("macos")
	cfg.Sides[1].SndBuf, _ = model.ParseBuf("2m")
	p := startPair(t, cfg)
	for range p.Updates() {
	}
	rep := p.Report()
	a, b := rep.Sides[0].Summary, rep.Sides[1].Summary
	t.Logf("client voluntary switches per 2 MiB: A (8 KiB) %.1f (%d over %d MiB), B (2m, effective %d) %.2f (%d over %d MiB)",
		a.Client.VolCSPer2MiB, a.Client.VolCS, a.Bytes>>20, b.SndBuf.ServerEffective, b.Client.VolCSPer2MiB, b.Client.VolCS, b.Bytes>>20)
	if a.Bytes == 0 || b.Bytes == 0 || a.Client.VolCS == 0 {
		t.Fatalf("nothing measured: A %d bytes %d switches, B %d bytes", a.Bytes, a.Client.VolCS, b.Bytes)
	}
	if !(a.Client.VolCSPer2MiB > 2*b.Client.VolCSPer2MiB) {
		t.Errorf("A's client wake-ups per 2 MiB %.2f not above twice B's %.2f", a.Client.VolCSPer2MiB, b.Client.VolCSPer2MiB)
	}
	if !(a.Server.VolCSPer2MiB > b.Server.VolCSPer2MiB) {
		t.Errorf("A's server wake-ups per 2 MiB %.2f not above B's %.2f", a.Server.VolCSPer2MiB, b.Server.VolCSPer2MiB)
	}
	// Page faults come from the same getrusage: known for both processes
	// (warm buffers keep them near 0, so only that they are counted).
	if !a.Client.FaultsPer2MiB.Known() || !a.Server.FaultsPer2MiB.Known() {
		t.Errorf("page faults per 2 MiB: client %v, server %v, want counted", a.Client.FaultsPer2MiB, a.Server.FaultsPer2MiB)
	}
}

// For writes the client's send buffer shows in the sender's figure: with
// the client's SO_SNDBUF at 8 KiB (macos) on A and 2 MiB on B, A's client
// makes at least 8× the send calls plus send EAGAIN per 2 MiB (issue 17).
func TestSenderCallsFollowTheClientBuffer(t *testing.T) {
	cfg := testConfig()
	cfg.Interval = model.Duration(250 * time.Millisecond)
	cfg.Duration = model.Duration(3 * time.Second)
	for i, b := range []string{"macos", "2m"} {
		cfg.Sides[i].Workload = model.WorkWrite
		cfg.Sides[i].ClientSndBuf, _ = model.ParseBuf(b)
	}
	p := startPair(t, cfg)
	for range p.Updates() {
	}
	rep := p.Report()
	a, b := rep.Sides[0].Summary, rep.Sides[1].Summary
	cost := func(s model.Summary) model.Figure {
		return model.SumFigures(s.SenderCallsPer2MiB(), s.SenderEAGAINPer2MiB())
	}
	t.Logf("sender (client) send calls + send EAGAIN per 2 MiB: A (8 KiB) %.1f, B (2m, effective %d) %.2f",
		cost(a), b.SndBuf.ClientEffective, cost(b))
	if model.SenderName(a.Settings.Workload) != "client" || a.Sender() != &a.Client {
		t.Fatalf("the sender of a write is %s", model.SenderName(a.Settings.Workload))
	}
	if a.Bytes == 0 || b.Bytes == 0 || !cost(a).Known() || !cost(b).Known() {
		t.Fatalf("nothing measured: A %d bytes, B %d bytes", a.Bytes, b.Bytes)
	}
	if !(cost(a) >= 8*cost(b)) {
		t.Errorf("A's sender cost %.2f per 2 MiB is not 8× B's %.2f", cost(a), cost(b))
	}
}
