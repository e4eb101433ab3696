package engine

import (
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

// A change that needs new children and whose children do not start (here
// a real server command that exits before it listens) loses nothing: the
// error says why, the side keeps the configuration it ran and runs it
// again. It was left down with the failed command committed, while the
// explorer still showed it running with its last figures.
func TestFailedRestartGoesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a pair")
	}
	p := startPair(t, testConfig())
	waitFor(t, p, 30*time.Second, "a sample of B", func(u model.Update) bool { return u.Sample != nil && u.Sample.Side == "B" })
	st, _ := model.Lookup(model.SetServer)
	err := p.Apply(model.Change{Side: 1, Setting: st, Value: model.Value{Str: "false {socket}"}})
	if err == nil || !strings.Contains(err.Error(), "runs as before") {
		t.Fatalf("a real server that exits at once: %v", err)
	}
	if got := p.Config().Sides[1].Server; got != "" {
		t.Errorf("B's server after the failed change: %q, want ours again", got)
	}
	if p.sides[1].runningLoad() == nil {
		t.Errorf("B is down after the failed change")
	}
}
