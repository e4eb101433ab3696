package engine

import (
	"errors"
	"strings"
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/phrase"
)

// A --target side's buffers: a measured local server whose buffers follow
// the side has them in its stamp and takes their changes; one that keeps
// its own (a refusal at the attach) or is not measured says external and
// refuses them with the reason; its other settings are never ours.
func TestTargetBuffersFollowOnlyATunedServer(t *testing.T) {
	sc := model.DefaultSide("B")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	sc.SndBuf = model.Buf{Kind: model.BufSize, Bytes: 2 << 20}
	snd, _ := model.Lookup(model.SetSndBuf)
	tr, _ := model.Lookup(model.SetTransport)
	for _, tc := range []struct {
		name      string
		server    *child
		why       *model.Reason
		stamp     string
		refusedBy string // "" : allowed
	}{
		{"tuned", &child{attached: true, realPID: 42, realCmd: "qemu-nbd -k /tmp/q.sock"}, nil, "2m", ""},
		{"keeps its own", &child{attached: true, realPID: 42, realCmd: "qemu-nbd", bufsNA: &model.Reason{Kind: model.ReasonNoPermission, Detail: "kernel.yama.ptrace_scope is 2"}},
			&model.Reason{Kind: model.ReasonNoPermission, Detail: "kernel.yama.ptrace_scope is 2"}, "external", "kernel.yama.ptrace_scope is 2"},
		{"not measured", nil, &model.Reason{Kind: model.ReasonFailed, Detail: "nothing listens on /tmp/q.sock here"}, "external", "nothing listens on /tmp/q.sock here"},
		{"no reason kept", nil, nil, "external", "the server is external (nbd+unix:///?socket=/tmp/q.sock)"},
	} {
		s := &side{name: "B", server: tc.server, targetWhy: tc.why}
		if got := s.stampOf(sc).SndBuf; got != tc.stamp {
			t.Errorf("%s: stamp sndbuf %q, want %q", tc.name, got, tc.stamp)
		}
		err := s.targetRefusal(snd, sc)
		switch {
		case tc.refusedBy == "" && err != nil:
			t.Errorf("%s: sndbuf refused: %v", tc.name, err)
		case tc.refusedBy != "" && (err == nil || !strings.Contains(err.Error(), tc.refusedBy)):
			t.Errorf("%s: sndbuf refusal %v, want it to say %q", tc.name, err, tc.refusedBy)
		}
		if err := s.targetRefusal(tr, sc); err == nil || !strings.Contains(err.Error(), "not ours to set") {
			t.Errorf("%s: transport of a target: %v", tc.name, err)
		}
		if ts := s.targetServer(); (ts != nil) != (tc.server != nil) || ts != nil && (ts.BuffersNA != nil) != (tc.server.bufsNA != nil) {
			t.Errorf("%s: target server %+v", tc.name, ts)
		}
	}
}

// One local process serving both sides' --target (the usual way to point
// nbdscope at a server): the process's counts in a sample in which a
// side's load did not run are the other side's, and are left out of that
// side's server figures; in one in which both loads ran (a turn boundary)
// they are neither side's: the sample's server figures are n/a, and the
// summary's are over the other samples, with their payload. Counted in,
// each side's server calls were the whole process's at every boundary:
// A's and B's together 14% over perf's count of the process.
func TestSharedTargetServerCountsOnlyItsTurns(t *testing.T) {
	sc := model.DefaultSide("A")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	for _, tc := range []struct {
		name     string
		otherPID int
		otherRan bool
		active   int64 // ns the side's load ran in the sample
		want     uint64
		na       bool // the sample's server figures are not attributed
	}{
		{"shared, off its turn", 42, true, 0, 0, false},
		{"shared, its turn", 42, false, 250e6, 1000, false},
		{"shared, a turn boundary", 42, true, 100e6, 0, true},
		{"shared, neither ran", 42, false, 0, 0, false},
		{"another process, off its turn", 43, true, 0, 1000, false},
		{"another process, both ran", 43, true, 250e6, 1000, false},
	} {
		p := &Pair{}
		a := &side{name: "A", id: model.SideAt(0), p: p, cfg: sc, server: &child{attached: true, realPID: 42, realCmd: "qemu-nbd"}}
		b := &side{name: "B", id: model.SideAt(1), p: p, cfg: sc, server: &child{attached: true, realPID: tc.otherPID, realCmd: "qemu-nbd"}}
		p.sides = [2]*side{a, b}
		shared := p.sharesTargetServer(a)
		if shared != (tc.otherPID == 42) {
			t.Fatalf("%s: shared %v", tc.name, shared)
		}
		p.noteOthersRan([2]sideRead{{}, {ran: tc.otherRan}})
		lm := wire.Msg{ActiveNs: tc.active, Bytes: 512 << 20}
		sm := wire.Msg{Counters: model.Counters{IO: nbd.IOStats{SendCalls: 1000}, SysS: 0.2}}
		smp := a.measure(1, 0.25, lm, sm, true, shared, model.Fill{})
		if got := serverSends(smp); got != tc.want {
			t.Errorf("%s: the side's server send calls %d, want %d", tc.name, got, tc.want)
		}
		if na := smp.Server == nil; na != tc.na || na != (smp.ServerNA != nil) || na != (smp.ServerUnattributed == 1) {
			t.Errorf("%s: sample server %+v, na %+v, unattributed %d: want n/a %v, with the reason", tc.name, smp.Server, smp.ServerNA, smp.ServerUnattributed, tc.na)
		}
		if kept := keptSpan(a, smp); kept != "" {
			t.Errorf("%s: the other side's run is still noted after the sample: %s", tc.name, kept)
		}
	}
}

// A shared server's summary is over the samples whose server counts are
// known, with their payload: a boundary sample's bytes in the base would
// put its calls per 2 MiB below the process's.
func TestSharedTargetSummaryOverKnownSamples(t *testing.T) {
	sc := model.DefaultSide("A")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	p := &Pair{}
	a := &side{name: "A", id: model.SideAt(0), p: p, cfg: sc, server: &child{attached: true, realPID: 42, realCmd: "qemu-nbd"}}
	b := &side{name: "B", id: model.SideAt(1), p: p, cfg: sc, server: &child{attached: true, realPID: 42, realCmd: "qemu-nbd"}}
	p.sides = [2]*side{a, b}
	var lm, sm wire.Msg
	for i, otherRan := range []bool{false, false, true, false} {
		lm.ActiveNs += 250e6
		lm.Bytes += 512 << 20
		sm.Counters.IO.SendCalls += 1000 * uint64(i+1) // 1000, 2000, 3000 (unattributed), 4000
		p.noteOthersRan([2]sideRead{{}, {ran: otherRan}})
		a.measure(float64(i), 0.25, lm, sm, true, true, model.Fill{})
	}
	f, _, _ := a.meter.Summary(true, false, false)
	if f.Server == nil || f.ServerUnattributed != 1 || f.ServerBytes != 3*512<<20 || f.Bytes != 4*512<<20 {
		t.Fatalf("summary server %+v, unattributed %d, over %d of %d bytes: want 1 left out, over 3 samples' bytes", f.Server, f.ServerUnattributed, f.ServerBytes, f.Bytes)
	}
	if f.Server.SendCalls != 7000 || f.Server.SendCallsPer2MiB != model.Figure(7000.0/(3*256)) {
		t.Errorf("summary server send calls %d, %v per 2 MiB: want 7000, over 3 × 512 MiB", f.Server.SendCalls, f.Server.SendCallsPer2MiB)
	}
	// The same samples added as the explorer adds them agree.
	var sum model.Figures
	var prevL, prevS wire.Msg
	for i, otherRan := range []bool{false, false, true, false} {
		l := wire.Msg{ActiveNs: prevL.ActiveNs + 250e6, Bytes: prevL.Bytes + 512<<20}
		s := wire.Msg{Counters: model.Counters{IO: nbd.IOStats{SendCalls: prevS.Counters.IO.SendCalls + 1000*uint64(i+1)}}}
		p.noteOthersRan([2]sideRead{{ran: otherRan}, {}})
		sum = sum.Add(b.measure(float64(i), 0.25, l, s, true, true, model.Fill{}).Figures)
		prevL, prevS = l, s
	}
	if sum.Server == nil || sum.Server.SendCallsPer2MiB != f.Server.SendCallsPer2MiB || sum.ServerUnattributed != 1 {
		t.Errorf("samples added: server %+v, %d unattributed: want %v per 2 MiB, 1", sum.Server, sum.ServerUnattributed, f.Server.SendCallsPer2MiB)
	}
}

// In concurrent mode a --target process serving both sides cannot be
// split between them: a warning says its figures are n/a, with the mode
// that can.
func TestSharedTargetServerConcurrentWarns(t *testing.T) {
	p := &Pair{updates: make(chan model.Update, 4), ending: make(chan struct{})}
	p.rec = &recorder{p: p}
	sc := model.DefaultSide("A")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	for i := range p.sides {
		p.sides[i] = &side{name: sc.Name, id: model.SideAt(i), p: p, cfg: sc, server: &child{attached: true, realPID: 42}}
	}
	p.warnCores(model.ModeAlternate)
	p.warnCores(model.ModeConcurrent)
	close(p.updates)
	var said []string
	for u := range p.updates {
		if u.Warning != nil && u.Warning.Kind == model.WarnTargetShared {
			said = append(said, phrase.WarningLong(*u.Warning))
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "server figures are n/a") {
		t.Errorf("warnings %q: want one, in concurrent mode, saying the server figures are n/a", said)
	}
}

// A --target whose server is not measured keeps its own buffers: a
// starting --sndbuf-b 2m was dropped without a word ('server SO_SNDBUF
// external', exit 0); now a warning says it is not applied, and why.
func TestTargetUnsetBuffersSaid(t *testing.T) {
	p := &Pair{updates: make(chan model.Update, 4), ending: make(chan struct{})}
	p.rec = &recorder{p: p}
	sc := model.DefaultSide("B")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	s := &side{name: "B", id: model.SideAt(1), p: p, cfg: sc}
	s.warnBuffersUnset(sc, &model.Reason{Kind: model.ReasonNotLocal}) // at the default: nothing to say
	sc.SndBuf = model.Buf{Kind: model.BufSize, Bytes: 2 << 20}
	s.warnBuffersUnset(sc, model.Failed(errors.New("PID 42 does not lead its own process group")))
	close(p.updates)
	var said []string
	for u := range p.updates {
		if u.Warning != nil {
			said = append(said, phrase.WarningLong(*u.Warning))
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "sndbuf 2m is not applied") || !strings.Contains(said[0], "PID 42 does not lead") {
		t.Errorf("warnings %q: want one saying sndbuf 2m is not applied, and why", said)
	}
}
