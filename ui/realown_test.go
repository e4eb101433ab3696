package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
)

// A real server side's panel shows the send buffer the process had set
// itself (its own, which default restores) beside the one in effect,
// named after the process where the line has room, and within the
// panel's width at both sizes; our own server has no such value.
func TestPanelShowsRealServerOwnBuffer(t *testing.T) {
	p := testPanel(1)
	p.cfg.Server = `/usr/bin/qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	s := sample("B", 1, true)
	s.SndBuf.ServerEffective, s.SndBuf.ServerOwn, s.SndBuf.Clamped = 4<<20, 212992, false
	p.observe(s)
	for _, tc := range []struct {
		width int
		want  string
	}{
		{40, "own 208k"},
		{80, "qemu-nbd's own 208k"},
		{160, "qemu-nbd's own 208k"},
	} {
		p.SetSize(tc.width, 0)
		p.rows = nil
		rows := p.rowsOf(p.data())
		text := ansi.Strip(strings.Join(rows, "\n"))
		if !strings.Contains(text, tc.want) || !strings.Contains(text, "4m eff") {
			t.Errorf("width %d: no %q beside the buffer in effect:\n%s", tc.width, tc.want, text)
		}
		for _, r := range rows {
			if w := ansi.StringWidth(r); w > p.inner() {
				t.Errorf("width %d: row wider (%d) than the panel's inside (%d): %q", tc.width, w, p.inner(), ansi.Strip(r))
			}
		}
	}
	p.cfg.Server = ""
	p.SetSize(160, 0)
	if text := ansi.Strip(strings.Join(p.rowsOf(p.data()), "\n")); strings.Contains(text, "own") {
		t.Errorf("our own server's panel shows an own value:\n%s", text)
	}
}

// A local --target's server, measured: the panel names its PID and
// command, its buffers are the side's requests (set from outside) with
// the process's own values; an external one's stay n/a.
func TestPanelNamesTargetServer(t *testing.T) {
	p := testPanel(1)
	p.cfg.Target = "nbd+unix:///?socket=/tmp/q.sock"
	s := sample("B", 1, true)
	s.SndBuf.ServerEffective, s.SndBuf.ServerOwn, s.SndBuf.Clamped = 4<<20, 212992, false
	s.TargetServer = &model.RealProcess{PID: 4242, Command: "qemu-nbd -r -t -e 0 -f raw -k /tmp/q.sock null-co"}
	p.observe(s)
	for _, tc := range []struct {
		width int
		want  []string
	}{
		{40, []string{"target PID 4242 qemu-nbd", "2m → 4m eff", "own 208k"}},
		{160, []string{"server        PID 4242 · qemu-nbd -r -t", "target nbd+unix:///?socket=/tmp/q.sock", "qemu-nbd's own 208k", "server sndbuf 2m → 4m eff"}},
	} {
		p.SetSize(tc.width, 0)
		p.rows = nil
		text := ansi.Strip(strings.Join(p.rowsOf(p.data()), "\n"))
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("width %d: lacks %q:\n%s", tc.width, w, text)
			}
		}
	}
	s.TargetServer = nil
	p.observe(s)
	p.rows = nil
	if d := p.data(); d.server.req != na || d.targetPID != 0 {
		t.Errorf("an unmeasured target's buffer: req %q, PID %d", d.server.req, d.targetPID)
	}
}
