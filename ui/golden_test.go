package ui

import (
	"bytes"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"nbdscope/internal/cutcheck"
	"nbdscope/model"
)

// TestGoldenScreens runs the whole program (teatest) against the fake
// engine, feeds it a fixed 42-second run through the update channel and
// compares the final screen with testdata/TestGoldenScreens/WxH.golden.
// The colour profile is fixed (TestMain) and the elapsed time comes from
// the fake, so the screens are the same on every machine.
// Regenerate with: go test ./ui/ -run TestGoldenScreens -update
func TestGoldenScreens(t *testing.T) {
	cutcheck.AtEachSize(t, func(t *testing.T, w, h int) {
		f := newFake()
		m := newModel(f, Options{PresetName: "linux-gap"})
		// A 42 s run: A at the OS default (208k effective, ~10 calls
		// per 2 MiB), B at 2m clamped to 416k (a clamp warning). At
		// 20 s A drops to 64k (a change marker: more calls, less
		// throughput); a scripted change of A at the end tells us
		// every update was drawn.
		for i := 1; i <= 168; i++ {
			tt := float64(i) * 0.25
			a, b := sample("A", tt, true), sample("B", tt, true)
			b.ThroughputBps = model.Figure(3.0 * (1 << 30))
			b.Client.RecvCallsPer2MiB = 5.1
			if tt > 20 {
				a.SndBuf.ServerRequested, a.SndBuf.ServerEffective = "64k", 131072
				a.Client.RecvCallsPer2MiB = 16.4
				a.ThroughputBps = model.Figure(1.1 * (1 << 30))
			}
			f.push(model.Update{Sample: &a})
			f.push(model.Update{Sample: &b})
			if i == 80 {
				f.push(model.Update{Event: &model.Event{T: tt, Side: "A", Setting: "sndbuf", From: "default", To: "64k"}})
			}
			if i == 8 {
				f.push(model.Update{Warning: &model.Warning{T: tt, Side: "B", Kind: model.WarnClamp,
					Text: "B sndbuf: requested 2m, effective 416k — the kernel limit net.core.wmem_max is lower",
					Fix:  "sudo sysctl -w net.core.wmem_max=2097152  (persist: net.core.wmem_max = 2097152 in /etc/sysctl.d/90-nbdscope.conf)"}})
			}
		}
		f.push(model.Update{Event: &model.Event{T: 41.9, Side: "A", Setting: "connections", From: "1", To: "2"}})

		tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			return bytes.Contains(b, []byte("A connections 1→2"))
		}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
		tm.Send(keyMsg("q"))
		fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
		if !ok {
			t.Fatal("final model is not *Model")
		}
		if f.stopCount() != 1 {
			t.Errorf("Stop called %d times", f.stopCount())
		}
		out := fm.View()
		checkFits(t, out, w, h)
		teatest.RequireEqualOutput(t, []byte(out))
	})
}
