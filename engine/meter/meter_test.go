package meter

import (
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/nbd"
)

var t0 = time.Unix(1000, 0)

// at is a reading s seconds into the run: the load's payload, active
// clock and CPU (whole process, and within its clock), its receive calls.
func at(s float64, bytes uint64, activeS, cpuS, clockCPUS float64, recv uint64) Reading {
	return Reading{At: t0.Add(time.Duration(s * 1e9)),
		Load: Load{Bytes: bytes, ActiveNs: int64(activeS * 1e9), ClockCPU: &CPU{SysS: clockCPUS},
			Counters: model.Counters{SysS: cpuS, IO: nbd.IOStats{RecvCalls: recv}}},
		Server: Server{Counters: model.Counters{SysS: cpuS * 0.8}}}
}

func span(t float64) Span {
	return Span{T: t, Side: "A", Stamp: model.Stamp{SndBuf: "2m"}, HasServer: true,
		Placement: model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}}
}

// The first sample of a side's first turn, as recorded on a 2-core VM
// (run -t 6 -P 2 -w 2m, the load held to core 0): the resume warmed the
// load's buffers (32 MiB faulted in) before its clock started, so the
// process spent 0.151 s of CPU in a sample whose load ran 0.091 s: 1.67
// cores busy on one core, where the CPU within its clock was 0.088 s.
// A span's CPU and its seconds come from the same readings: at most 1.
func TestCoresBusyOfATurnsFirstSampleIsAtMostItsCores(t *testing.T) {
	var m Meter
	m.Begin(at(0.06, 0, 0, 0.001, 0, 0), model.Stamp{SndBuf: "2m"})
	smp := m.Sample(at(0.314, 256<<20, 0.091, 0.152, 0.088, 1200), span(0.314))
	if !smp.Active {
		t.Fatalf("the sample is not active: %+v", smp)
	}
	if cb := smp.Client.CoresBusy; !cb.Known() || cb > 1 {
		t.Errorf("client cores busy %v on one core: its CPU is not of its clock's moments", cb)
	}
	if want := model.Figure(0.088 / 0.091); smp.Client.CoresBusy != want {
		t.Errorf("client cores busy %v, want %v (CPU within the clock over the clock)", smp.Client.CoresBusy, want)
	}
	sum, _, _ := m.Summary(true, false, false)
	if cb := sum.Client.CoresBusy; cb > 1 {
		t.Errorf("the summary's client cores busy %v on one core", cb)
	}
}

// A real client's readings carry no CPU within a clock: its whole CPU is
// over its active seconds, as before.
func TestCoresBusyWithoutClockCPU(t *testing.T) {
	var m Meter
	r0, r1 := at(0, 0, 0, 0, 0, 0), at(0.25, 256<<20, 0.25, 0.2, 0, 100)
	r0.Load.ClockCPU, r1.Load.ClockCPU = nil, nil
	m.Begin(r0, model.Stamp{})
	smp := m.Sample(r1, span(0.25))
	if want := model.Figure(0.2 / 0.25); smp.Client.CoresBusy != want {
		t.Errorf("client cores busy %v, want %v", smp.Client.CoresBusy, want)
	}
}

// One accumulator: the summary, the turn and a segment of recorded
// readings are the sums of the samples' counts.
func TestSummaryTurnAndSegmentAreTheSamplesSums(t *testing.T) {
	var m Meter
	m.Begin(at(0, 0, 0, 0, 0, 0), model.Stamp{SndBuf: "2m"})
	readings := []Reading{
		at(0.25, 512<<20, 0.25, 0.2, 0.2, 2000),
		at(0.50, 1024<<20, 0.50, 0.4, 0.4, 5000),
		at(0.75, 1100<<20, 0.55, 0.45, 0.45, 5600),  // the drain after the turn
		at(1.00, 1100<<20, 0.55, 0.451, 0.45, 5600), // waiting
	}
	var sum model.Figures
	var last model.Sample
	for i, r := range readings {
		last = m.Sample(r, span(0.25*float64(i+1)))
		sum = sum.Add(last.Figures)
	}
	f, _, changed := m.Summary(true, false, false)
	if changed || f.Bytes != 1100<<20 || f.Client.RecvCalls != 5600 || f.Bytes != sum.Bytes || f.Client.RecvCalls != sum.Client.RecvCalls {
		t.Errorf("summary %d bytes, %d receive calls (changed %v); the samples add to %d, %d", f.Bytes, f.Client.RecvCalls, changed, sum.Bytes, sum.Client.RecvCalls)
	}
	if last.Turn == nil || last.Turn.Bytes != f.Bytes || last.Turn.Client.RecvCalls != f.Client.RecvCalls {
		t.Errorf("the waiting side's turn %+v, want the turn's sums (%d bytes)", last.Turn, f.Bytes)
	}
	segs := m.Segments(false, false)
	if len(segs) != 1 || segs[0].Bytes != f.Bytes || segs[0].From != 0 || segs[0].To != 1 {
		t.Errorf("segments %+v, want one of the run's %d bytes from 0 to 1 s", segs, f.Bytes)
	}
}

// A sample across a change of the settings belongs to no segment; the
// segments after it start anew, and its turn starts again after it.
func TestAChangeStartsASegment(t *testing.T) {
	var m Meter
	m.Begin(at(0, 0, 0, 0, 0, 0), model.Stamp{SndBuf: "2m"})
	m.Sample(at(0.25, 100<<20, 0.25, 0.1, 0.1, 100), span(0.25))
	sp := span(0.5)
	sp.Stamp.SndBuf = "64k"
	if smp := m.Sample(at(0.5, 200<<20, 0.5, 0.2, 0.2, 200), sp); !smp.Changed || smp.Turn != nil {
		t.Errorf("the sample across the change: changed %v, turn %+v", smp.Changed, smp.Turn)
	}
	sp = span(0.75)
	sp.Stamp.SndBuf = "64k"
	m.Sample(at(0.75, 300<<20, 0.75, 0.3, 0.3, 300), sp)
	segs := m.Segments(false, false)
	if len(segs) != 2 || segs[0].Bytes != 100<<20 || segs[1].Bytes != 100<<20 || segs[1].Settings.SndBuf != "64k" {
		t.Fatalf("segments %+v", segs)
	}
	if _, _, changed := m.Summary(true, false, false); !changed {
		t.Errorf("the summary of two segments is not marked changed")
	}
}

// A folded reading adds its longest request to the next sample, and no
// span of its own.
func TestFoldKeepsTheLongestRequest(t *testing.T) {
	var m Meter
	m.Begin(at(0, 0, 0, 0, 0, 0), model.Stamp{})
	r := at(0.05, 10<<20, 0.05, 0.01, 0.01, 10)
	r.Load.MaxLatNs = 9e6
	m.Fold(r)
	smp := m.Sample(at(0.3, 100<<20, 0.3, 0.1, 0.1, 100), span(0.3))
	if smp.LatencyMaxMs != 9 || smp.Bytes != 100<<20 {
		t.Errorf("after a fold: max latency %v ms, %d bytes; want 9 ms, the whole span's bytes", smp.LatencyMaxMs, smp.Bytes)
	}
}

// A shared server's counts go to the side whose load alone ran, split at
// a cut between turns, and are n/a in a span where both ran.
func TestSharedServerSpans(t *testing.T) {
	srv := func(r Reading, sends uint64) Reading {
		r.Server.Counters.IO.SendCalls = sends
		return r
	}
	sp := span(0.25)
	sp.Shared = true
	var a Meter
	a.Begin(srv(at(0, 0, 0, 0, 0, 0), 0), model.Stamp{})
	a.Cut(srv(at(0.2, 80<<20, 0.2, 0.1, 0.1, 80), 800)) // A ran alone up to the switch
	a.OtherRan()                                        // then B
	smp := a.Sample(srv(at(0.25, 80<<20, 0.2, 0.1, 0.1, 80), 1000), sp)
	if smp.Server == nil || smp.Server.SendCalls != 800 {
		t.Errorf("A's sample across the switch: server %+v, want A's 800 sends", smp.Server)
	}
	a.OtherRan()
	sp.T = 0.5
	smp = a.Sample(srv(at(0.5, 90<<20, 0.3, 0.15, 0.15, 90), 1500), sp)
	if smp.Server != nil || smp.ServerUnattributed != 1 {
		t.Errorf("a span both loads ran in: server %+v, want n/a", smp.Server)
	}
}

// An exec side's client's direction is the payload its server moved.
func TestClientFlowFollowsThePayload(t *testing.T) {
	var m Meter
	m.Begin(Reading{At: t0, Server: Server{Payload: &nbd.Payload{}}}, model.Stamp{})
	d := m.PayloadSince(Server{Payload: &nbd.Payload{WriteBytes: 64 << 20}})
	if fl := m.NoteClient("nbdcopy", d.ReadBytes, d.WriteBytes); fl != model.FlowWrite || m.ClientFlow("nbdcopy") != model.FlowWrite {
		t.Errorf("a client that wrote 64 MiB: flow %q", fl)
	}
	if fl := m.ClientFlow("qemu-img"); fl != "" {
		t.Errorf("another command's flow %q, want none yet", fl)
	}
}

// The drain after a turn, as recorded (run -t 6 -P 2 -w 2m): the load
// ran 0.024 s of a 0.242 s interval, and the server, whose CPU is its
// whole process's between the readings, spent 0.028 s: over the load's
// clock that read 1.16 cores busy on one core. Its CPU is over the span
// its readings cover.
func TestServerCoresBusyOfADrainIsOverItsReadings(t *testing.T) {
	var m Meter
	m.Begin(at(5.078, 0, 0, 0, 0, 0), model.Stamp{})
	r := at(5.32, 24<<20, 0.024, 0.016, 0.015, 100)
	r.Server.Counters.SysS = 0.028
	smp := m.Sample(r, span(5.32))
	if cb := smp.Server.CoresBusy; cb > 1 {
		t.Errorf("server cores busy %v on one core", cb)
	}
	if want := model.Figure(0.015 / 0.024); smp.Client.CoresBusy != want {
		t.Errorf("client cores busy %v, want %v (its CPU within its clock)", smp.Client.CoresBusy, want)
	}
}

// A real pair's payload is counted one export a finished run: the summary
// ends at the sample its last runs ended in (Settle), so a run still going
// at the end adds neither its time nor its calls to bytes never counted.
func TestSummaryEndsWhereThePayloadSettled(t *testing.T) {
	var m Meter
	m.Begin(at(0, 0, 0, 0, 0, 0), model.Stamp{SndBuf: "2m"})
	m.Sample(at(0.5, 1<<30, 0.5, 0.4, 0.4, 500), span(0.5)) // a run ended: 1 GiB
	m.Settle()
	m.Sample(at(1.0, 1<<30, 1.0, 0.8, 0.8, 1000), span(1.0)) // the next, unfinished
	sum, _, _ := m.Summary(true, false, false)
	if sum.Seconds != 0.5 || sum.Bytes != 1<<30 {
		t.Errorf("summary %v s, %d bytes; want the settled 0.5 s and 1 GiB", sum.Seconds, sum.Bytes)
	}
	if want := model.Figure(500.0 / 512); sum.Client.RecvCallsPer2MiB != want {
		t.Errorf("recv calls per 2 MiB %v, want %v: the unfinished run's calls are not the settled bytes'", sum.Client.RecvCallsPer2MiB, want)
	}
}
