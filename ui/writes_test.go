package ui

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"nbdscope/model"
)

// writeStep is a key, what the screen shows once the key has done its
// part, and how many controller calls have been made once it has.
type writeStep struct {
	key, want string
	calls     int
}

// runWrites runs the whole program (teatest) against a fake whose sides
// write (set by setup), sends keys one at a time, each once the screen
// shows what the one before it should have done and the controller has
// received the calls made so far, quits and returns the controller calls.
//
// The screen shows a change as soon as it is queued, before the
// controller runs it; a key sent then could replace it (enqueue replaces a
// queued change of the same setting), and q could end the program before
// it runs. So each step waits for its calls too.
func runWrites(t *testing.T, setup func(*model.Config), steps []writeStep) *fakeCtrl {
	t.Helper()
	f := newFake()
	setup(&f.cfg)
	m := newModel(f, Options{PresetName: "write"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	for _, s := range steps {
		tm.Send(keyMsg(s.key))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			return bytes.Contains(b, []byte(s.want))
		}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
		waitApplied(t, f, s.calls, s.key)
	}
	tm.Send(keyMsg("q"))
	if _, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model); !ok {
		t.Fatal("final model is not *Model")
	}
	return f
}

// waitApplied waits up to 10 s for the controller to have received n
// Apply calls.
func waitApplied(t *testing.T, f *fakeCtrl, n int, key string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.appliedCopy()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("after %q: %d controller calls within 10 s, want %d: %v", key, len(f.appliedCopy()), n, f.appliedCopy())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWriteSideBufferKeys (issue 17): on a write side the buffer keys act
// on the client's send buffer — the bulk sender's — and the controller
// receives client-sndbuf changes; k moves them to the server's send buffer
// and cycles on through the client's receive buffer back to the sender.
func TestWriteSideBufferKeys(t *testing.T) {
	f := runWrites(t, func(c *model.Config) {
		c.Sides[1].Workload = model.WorkWrite
		c.Sides[1].ClientSndBuf = model.Buf{Kind: model.BufSize, Bytes: 2 << 20}
	}, []writeStep{
		{"2", "▸ B", 0},
		{"-", "client sndbuf 1m → ", 1},
		{"-", "client sndbuf 512k → ", 2},
		{"+", "client sndbuf 1m → ", 3},
		{"k", "act on server sndbuf (sndbuf)", 3},
		{"-", "server sndbuf 1m → ", 4},
		{"k", "act on client sndbuf (client-sndbuf)", 4},
		{"k", "act on client rcvbuf (client-rcvbuf)", 4},
		{"k", "act on server rcvbuf (server-rcvbuf)", 4},
		{"-", "server rcvbuf 128k → ", 5},
		{"k", "act on the sender's send buffer (client-sndbuf)", 5},
		{"=", "B client-sndbuf = ", 5},
		{"esc", "cancelled", 5},
	})
	got := fmt.Sprint(f.appliedCopy())
	want := fmt.Sprint([]model.Change{
		ch(1, model.SetClientSndBuf, "1m"), ch(1, model.SetClientSndBuf, "512k"), ch(1, model.SetClientSndBuf, "1m"),
		ch(1, model.SetSndBuf, "1m"), ch(1, model.SetServerRcvBuf, "128k"),
	})
	if got != want {
		t.Errorf("controller calls\n got %s\nwant %s", got, want)
	}
}

// TestWriteSideGap (issue 17): g sets the bulk sender's buffers, so on
// write sides the gap is the clients' send buffers: A at macos, B at 2m.
// A read side keeps the server's (the seed's gap).
func TestWriteSideGap(t *testing.T) {
	f := runWrites(t, func(c *model.Config) {
		for i := range c.Sides {
			c.Sides[i].Workload = model.WorkWrite
		}
	}, []writeStep{{"g", "gap: A at macOS's 8k, B at 2m", 2}})
	want := fmt.Sprint([]model.Change{ch(0, model.SetClientSndBuf, "macos"), ch(1, model.SetClientSndBuf, "2m")})
	if got := fmt.Sprint(f.appliedCopy()); got != want {
		t.Errorf("g on write sides: controller calls\n got %s\nwant %s", got, want)
	}
	sc := f.Config().Sides
	if sc[0].ClientSndBuf.Kind != model.BufMacOS || sc[1].ClientSndBuf.Bytes != 2<<20 || sc[0].SndBuf != (model.Buf{}) {
		t.Errorf("after g: A client %v server %v, B client %v", sc[0].ClientSndBuf, sc[0].SndBuf, sc[1].ClientSndBuf)
	}

	// Mixed: both send buffers move together, named so on the first line
	// of a narrow panel.
	h := newHarness(t, Options{}, 80, 24)
	h.f.cfg.Sides[0].Workload = model.WorkMixed
	h.m.base.Cfg = h.f.Config()
	h.m.recompute()
	h.press("g")
	h.settle()
	h.wantApplied(ch(0, model.SetSndBuf, "macos"), ch(0, model.SetClientSndBuf, "macos"))
	h.wantView("srv+cli sndbuf")
}
