package engine

import (
	"strings"
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
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
		why       string
		stamp     string
		refusedBy string // "" : allowed
	}{
		{"tuned", &child{attached: true, realPID: 42, realCmd: "qemu-nbd -k /tmp/q.sock"}, "", "2m", ""},
		{"keeps its own", &child{attached: true, realPID: 42, realCmd: "qemu-nbd", bufsNA: "kernel.yama.ptrace_scope is 2"},
			"kernel.yama.ptrace_scope is 2", "external", "kernel.yama.ptrace_scope is 2"},
		{"not measured", nil, "nothing listens on /tmp/q.sock here", "external", "nothing listens on /tmp/q.sock here"},
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
		if ts := s.targetServer(); (ts != nil) != (tc.server != nil) || ts != nil && ts.BuffersNA != tc.server.bufsNA {
			t.Errorf("%s: target server %+v", tc.name, ts)
		}
	}
}

// One local process serving both sides' --target (the usual way to point
// nbdscope at a server): the process's counts in a sample in which a
// side's load did not run are the other side's, and are left out of that
// side's server figures. Counted in, each side's server CPU and calls
// were the whole process's (A's and B's server sys time alike, every
// ratio the ratio of their payloads).
func TestSharedTargetServerCountsOnlyItsTurns(t *testing.T) {
	sc := model.DefaultSide("A")
	sc.Target = "nbd+unix:///?socket=/tmp/q.sock"
	for _, tc := range []struct {
		name     string
		otherPID int
		active   int64 // ns the side's load ran in the sample
		want     uint64
	}{
		{"shared, off its turn", 42, 0, 0},
		{"shared, its turn", 42, 250e6, 1000},
		{"another process, off its turn", 43, 0, 1000},
	} {
		p := &Pair{}
		a := &side{name: "A", id: model.SideAt(0), p: p, cfg: sc, server: &child{attached: true, realPID: 42, realCmd: "qemu-nbd"}}
		b := &side{name: "B", id: model.SideAt(1), p: p, cfg: sc, server: &child{attached: true, realPID: tc.otherPID, realCmd: "qemu-nbd"}}
		p.sides = [2]*side{a, b}
		shared := p.sharesTargetServer(a)
		if shared != (tc.otherPID == 42) {
			t.Fatalf("%s: shared %v", tc.name, shared)
		}
		lm := wire.Msg{ActiveNs: tc.active, Bytes: 512 << 20}
		sm := wire.Msg{Counters: model.Counters{IO: nbd.IOStats{SendCalls: 1000}, SysS: 0.2}}
		a.measure(1, 0.25, lm, sm, true, shared, model.Fill{})
		if got := a.tot.server.IO.SendCalls; got != tc.want {
			t.Errorf("%s: the side's server send calls %d, want %d", tc.name, got, tc.want)
		}
	}
}

// In concurrent mode a --target process serving both sides cannot be
// split between them: a warning says so, with the mode that can.
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
		if u.Warning != nil && u.Warning.Kind == model.WarnTarget {
			said = append(said, u.Warning.Text)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "both sides' together") {
		t.Errorf("warnings %q: want one, in concurrent mode, saying the figures are both sides' together", said)
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
	s.warnBuffersUnset(sc, "no reason") // at the default: nothing to say
	sc.SndBuf = model.Buf{Kind: model.BufSize, Bytes: 2 << 20}
	s.warnBuffersUnset(sc, "PID 42 does not lead its own process group")
	close(p.updates)
	var said []string
	for u := range p.updates {
		if u.Warning != nil {
			said = append(said, u.Warning.Text)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "sndbuf 2m is not applied") || !strings.Contains(said[0], "PID 42 does not lead") {
		t.Errorf("warnings %q: want one saying sndbuf 2m is not applied, and why", said)
	}
}
