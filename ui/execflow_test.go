package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// On a side left at workload write, e and 'nbdcopy {uri} null:' ran a
// client that reads: its calls were labelled "server recv" and the buffer
// keys stepped the client's send buffer, the direction taken from the
// workload alone, and nothing said so. The engine's samples say which way
// the client moved its data (model.Flow, from its server's payload): the
// panel labels its calls, and the keys step the sender's buffer, by that,
// and says that it contradicts the workload, at 80x24 and 160x48.
func TestExecSideFollowsWhatTheClientDid(t *testing.T) {
	const cmd = "nbdcopy {uri} null:"
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		h.f.cfg.Sides[1].Workload = model.WorkWrite
		h.m.base.Cfg = h.f.Config()
		h.m.recompute()
		h.press("2", "e")
		h.submit(cmd)
		for i := range 8 {
			s := sample("B", 0.25*float64(i+1), true)
			s.Settings = model.StampOf(h.f.Config().Sides[1])
			s.Flow = model.FlowRead // the server sent the payload
			s.Client.RecvCallsPer2MiB, s.Server.RecvCallsPer2MiB = 32.5, 3.4
			h.send(model.Update{Sample: &s})
		}
		wide := size[0] >= 160
		calls := "32.5 per 2MiB (client recv)"
		if wide {
			calls = "32.5 per 2 MiB (client)"
		}
		h.wantView(calls, "the client read", "+/-/= sndbuf")
		// The panel names the buffer the keys step first: the server's.
		snd, _ := model.Lookup(model.SetSndBuf)
		if first := h.m.panels[1].data().shownBufs()[0]; !first.stepped || first.label != snd.Label {
			t.Errorf("%dx%d: the panel names %q first (stepped %v), want the server's send buffer", size[0], size[1], first.label, first.stepped)
		}
		if v := h.view(); strings.Contains(v, "(server recv)") || strings.Contains(v, "3.4 per 2") && !wide {
			t.Errorf("%dx%d: the reading client's calls are still labelled the server's:\n%s", size[0], size[1], v)
		}
		// The keys step the sender's send buffer: the server's.
		h.press("-")
		h.settle()
		h.wantApplied(ch(1, model.SetExec, cmd), ch(1, model.SetSndBuf, "1m"))
		// A workload set to match (w: write → randread) takes the note
		// away.
		h.press("w")
		h.settle()
		if wl := h.f.Config().Sides[1].Workload; wl != model.WorkRandRead {
			t.Fatalf("w on B: workload %q", wl)
		}
		if strings.Contains(h.view(), "the client read") {
			t.Errorf("%dx%d: the note stays once the workload is read:\n%s", size[0], size[1], h.view())
		}
	}
}

// The interval in which A's workload went read → write mixed the client's
// and the server's calls: the engine marks it (model.FlowChanged) and the
// panel shows its receive calls n/a, "recv changed" ("changed" when wide), never a number.
func TestPanelIntervalAcrossAWorkloadChange(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		s := sample("A", 1, true)
		s.Changed, s.Flow = true, model.FlowChanged
		s.Settings.Workload = model.WorkWrite
		h.send(model.Update{Sample: &s})
		want := "n/a per 2MiB (recv changed)"
		if size[0] >= 160 {
			want = "n/a per 2 MiB (changed)"
		}
		h.wantView(want)
		if strings.Contains(h.view(), "10.2 per 2") {
			t.Errorf("%dx%d: the mixed interval's client calls are shown as the receiver's:\n%s", size[0], size[1], h.view())
		}
	}
}
