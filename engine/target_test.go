package engine

import (
	"strings"
	"testing"

	"nbdscope/model"
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
