package engine

import (
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/model"
)

// TestExecAgainstRealServer: a real client (nbdcopy) against a real
// server (qemu-nbd on null-co, 64 MiB) runs, where the side was refused
// ("no payload count live"): each finished run is taken to move the
// export once, as sweep --exec --server takes it, so the side's payload is
// 64 MiB a run, its throughput known, and a warning says the payload is
// assumed.
func TestExecAgainstRealServer(t *testing.T) {
	testbin.Need(t, "apt-get install qemu-utils", "qemu-nbd")
	testbin.Need(t, "apt-get install libnbd-bin", "nbdcopy")
	const export = 64 << 20
	cfg := testConfig()
	cfg.Duration = 0 // until three runs ended (at most 30 s)
	cfg.Sides[1].Server = `qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":67108864}}'`
	cfg.Sides[1].Exec = "nbdcopy {uri} null:"
	p := startPair(t, cfg)
	limit := time.AfterFunc(30*time.Second, func() { p.Stop() })
	defer limit.Stop()
	runs := 0
	var warned []model.Warning
	for u := range p.Updates() {
		if e := u.Event; e != nil && e.Side == "B" && e.Setting == model.ExecRunEvent {
			if runs++; runs == 3 {
				p.Stop()
			}
		}
		if w := u.Warning; w != nil && w.Side == "B" && w.Kind == model.WarnAssumed {
			warned = append(warned, *w)
		}
	}
	if runs < 3 {
		t.Fatalf("%d client runs ended in 30 s, want 3", runs)
	}
	rep := p.Report()
	sum := rep.Sides[1].Summary
	if sum.Bytes == 0 || sum.Bytes%export != 0 || sum.Bytes > uint64(runs)*export || !sum.ThroughputBps.Known() {
		t.Errorf("B's payload %d bytes (throughput %v) after %d runs of a 64 MiB export, want whole exports, known", sum.Bytes, sum.ThroughputBps, runs)
	}
	if !sum.PayloadAssumed {
		t.Error("B's summary is not marked payload_assumed")
	}
	if len(warned) != 1 || warned[0].What != (model.PayloadAssumed{Command: cfg.Sides[1].Exec, Export: export}) {
		t.Errorf("warnings %+v, want one saying the payload is assumed, 64m a run", warned)
	}
}
