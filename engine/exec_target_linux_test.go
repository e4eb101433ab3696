package engine

import (
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

// An exec side's throughput is the payload its server counted, which on
// a --target served for both sides by one process would be both sides'
// bytes: a real client as a side's load on a --target is refused live
// too (as --exec-b beside --target is at the command line), saying why,
// and the side keeps our load, whose bytes are its own count.
func TestExecOnSharedTargetRefused(t *testing.T) {
	_, uri := startOwnGroupServer(t)
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	cfg.Duration = model.Duration(2 * time.Second)
	for i := range cfg.Sides {
		cfg.Sides[i].Target = uri
	}
	p := startPair(t, cfg)
	st, _ := model.Lookup(model.SetExec)
	err := p.Apply(model.Change{Side: 1, Setting: st, Value: model.Value{Str: "nbdcopy {uri} null:"}})
	if err == nil || !strings.Contains(err.Error(), "own spawned server") {
		t.Fatalf("exec on B's shared target: %v, want it refused, saying a real client runs against the side's own server", err)
	}
	waitFor(t, p, 30*time.Second, "the run's end", func(u model.Update) bool { return u.Done != nil })
	rep := p.Report()
	if got := p.Config().Sides[1].Exec; got != "" {
		t.Errorf("B's exec after the refusal: %q, want our load", got)
	}
	for _, sd := range rep.Sides {
		if sd.Summary.Bytes == 0 {
			t.Errorf("side %s moved nothing", sd.Name)
		}
	}
}
