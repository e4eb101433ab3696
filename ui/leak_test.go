package ui

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"go.uber.org/goleak"

	"nbdscope/internal/leakcheck"
	"nbdscope/model"
)

// closingCtrl keeps the engine's side of the Controller contract that the
// plain fake leaves out: Stop ends the update stream with a Done update and
// closes the channel, as Pair.Stop does. Without it the UI's waiting
// update command would block forever by the fake's fault, not the UI's.
type closingCtrl struct {
	*fakeCtrl
	once sync.Once
}

func (c *closingCtrl) Stop() error {
	err := c.fakeCtrl.Stop()
	c.once.Do(func() {
		c.push(model.Update{Done: &model.Done{Err: context.Canceled}})
		close(c.updates)
	})
	return err
}

// TestProgramLeavesNoGoroutines runs the whole program (teatest) against
// the fake engine, draws a few samples, quits, and checks that nothing it
// started is still running: the update reader, the frame ticker, the
// background stop. "q q" leaves the program while the stop is running;
// Run then waits for that stop through the stopper, and so does the test.
func TestProgramLeavesNoGoroutines(t *testing.T) {
	for _, keys := range [][]string{{"q"}, {"q", "q"}} {
		t.Run(strings.Join(keys, ""), func(t *testing.T) {
			// teatest's own SIGINT watcher lives until the process ends.
			// bubbletea does not wait for its commands' goroutines when the
			// program ends (a frame tick ends on its own a little later):
			// leakcheck waits for them.
			defer leakcheck.VerifyNone(t, goleak.IgnoreCurrent(),
				goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"))
			f := &closingCtrl{fakeCtrl: newFake()}
			m := newModel(f, Options{})
			for i := 1; i <= 8; i++ {
				a, b := sample("A", float64(i)*0.25, true), sample("B", float64(i)*0.25, true)
				f.push(model.Update{Sample: &a})
				f.push(model.Update{Sample: &b})
			}
			f.push(model.Update{Event: &model.Event{T: 2, Side: "A", Setting: "connections", From: "1", To: "2"}})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
				return bytes.Contains(b, []byte("A connections 1→2"))
			}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
			for _, k := range keys {
				tm.Send(keyMsg(k))
			}
			fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
			if !ok {
				t.Fatal("final model is not *Model")
			}
			if err := fm.stopper.stop(f); err != nil { // what Run does after the program ends
				t.Fatal(err)
			}
			if n := f.stopCount(); n != 1 {
				t.Errorf("Stop called %d times, want 1", n)
			}
		})
	}
}
