package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestRealPairExportAndUncounted: a real client against a real server at
// the default size is served model.RealPairSize (1 GiB), where the 64 GiB
// default kept qemu-img in its first run past a 20 s run; and while no
// run has ended, each of the side's samples has its throughput n/a, where
// it said 0 B/s. The client here is a shell that reads {size} (asked of
// the export) and then outlasts the run.
func TestRealPairExportAndUncounted(t *testing.T) {
	testbin.Need(t, "apt-get install qemu-utils", "qemu-nbd")
	seen := filepath.Join(t.TempDir(), "seen")
	cfg := testConfig()
	cfg.Duration = model.Duration(2 * time.Second)
	cfg.Sides[1].Size = model.DefaultSize // none given (the test config's is 1 GiB)
	cfg.Sides[1].Server = `qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	cfg.Sides[1].Exec = `/bin/sh -c 'echo {size} >> ` + seen + `; exec sleep 30' sh {uri}`
	p := startPair(t, cfg)
	var active, known int
	for u := range p.Updates() {
		if s := u.Sample; s != nil && s.Side == "B" && s.Active {
			active++
			if s.ThroughputBps.Known() || s.Turn != nil && s.Turn.ThroughputBps.Known() {
				known++
			}
		}
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the client never ran: %v", err)
	}
	if got, want := strings.Fields(string(b)), strconv.Itoa(model.RealPairSize); len(got) == 0 || got[0] != want {
		t.Errorf("the client saw an export of %q bytes, want %s (model.RealPairSize)", got, want)
	}
	if sc := p.Report().Config.Sides[1]; sc.Size != model.RealPairSize {
		t.Errorf("the run's configuration says B's size is %d, want %d", sc.Size, model.RealPairSize)
	}
	if active == 0 || known != 0 {
		t.Errorf("%d of B's %d active samples have a throughput, before any client run ended: want all n/a", known, active)
	}
}

// TestRealPairExportGiven: a size given is the export a real pair gets.
func TestRealPairExportGiven(t *testing.T) {
	sc := model.DefaultSide("B")
	if got := sc.RealPairExport(); got != model.DefaultSize {
		t.Errorf("our load on our server: export %d, want the default %d", got, model.DefaultSize)
	}
	sc.Exec, sc.Server = "qemu-img convert {uri} null", "qemu-nbd -k {socket} x"
	if got := sc.RealPairExport(); got != model.RealPairSize {
		t.Errorf("a real pair at the default size: export %d, want %d", got, model.RealPairSize)
	}
	sc.Size = 4 << 30
	if got := sc.RealPairExport(); got != 4<<30 {
		t.Errorf("a real pair at a size given, 4 GiB: export %d, want it", got)
	}
}

// TestRealPairExportOnExec: the explorer's e on a side with a real server
// (S) at the default size restarts it serving model.RealPairSize to the
// client, and - (our load again) gives the side the default back.
func TestRealPairExportOnExec(t *testing.T) {
	testbin.Need(t, "apt-get install qemu-utils", "qemu-nbd")
	seen := filepath.Join(t.TempDir(), "seen")
	cfg := testConfig()
	cfg.Duration = 0 // until stopped (at most 30 s)
	cfg.Sides[1].Size = model.DefaultSize
	cfg.Sides[1].Server = `qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	p := startPair(t, cfg)
	limit := time.AfterFunc(30*time.Second, func() { p.Stop() })
	defer limit.Stop()
	st, _ := model.Lookup(model.SetExec)
	exec := `/bin/sh -c 'echo {size} >> ` + seen + `; exec sleep 30' sh {uri}`
	if err := p.Apply(model.Change{Side: 1, Setting: st, Value: model.Value{Str: exec}}); err != nil {
		t.Fatalf("e on B: %v", err)
	}
	if got := p.Config().Sides[1].Size; got != model.RealPairSize {
		t.Errorf("B's size after e: %d, want %d", got, model.RealPairSize)
	}
	// The client is let run until it has said what it saw: switched away
	// at once, it can be stopped before its first line on a loaded machine.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(seen); err == nil && len(strings.Fields(string(b))) > 0 {
			break
		}
	}
	if err := p.Apply(model.Change{Side: 1, Setting: st, Value: model.Value{Str: ""}}); err != nil {
		t.Fatalf("our load again on B: %v", err)
	}
	if got := p.Config().Sides[1].Size; got != model.DefaultSize {
		t.Errorf("B's size with our load again: %d, want the default %d", got, model.DefaultSize)
	}
	p.Stop()
	b, err := os.ReadFile(seen)
	if got := strings.Fields(string(b)); err != nil || len(got) == 0 || got[0] != strconv.Itoa(model.RealPairSize) {
		t.Errorf("the client saw an export of %q bytes (%v), want %d", got, err, model.RealPairSize)
	}
}

// TestAssumedRateIsTheRuns: a sample in which client runs ended has the
// runs' throughput, their exports over their own time, not over the
// sample's: 1 GiB counted in a 0.27 s sample read 3.7 GiB/s for runs of
// 0.75 s. In concurrent mode a run is never paused, so its running time
// is its wall time, the exec.run event's: throughput × the runs' seconds
// is the sample's bytes.
func TestAssumedRateIsTheRuns(t *testing.T) {
	testbin.Need(t, "apt-get install qemu-utils", "qemu-nbd")
	testbin.Need(t, "apt-get install libnbd-bin", "nbdcopy")
	cfg := testConfig()
	cfg.Mode = model.ModeConcurrent
	cfg.Duration = 0 // until six runs ended (at most 30 s)
	cfg.Sides[1].Size = 256 << 20
	cfg.Sides[1].Server = `qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	cfg.Sides[1].Exec = "nbdcopy {uri} null:"
	p := startPair(t, cfg)
	limit := time.AfterFunc(30*time.Second, func() { p.Stop() })
	defer limit.Stop()
	var samples []model.Sample
	var runs []model.Event
	for u := range p.Updates() {
		if s := u.Sample; s != nil && s.Side == "B" {
			samples = append(samples, *s)
		}
		if e := u.Event; e != nil && e.Side == "B" && e.Setting == model.ExecRunEvent {
			if runs = append(runs, *e); len(runs) == 6 {
				p.Stop()
			}
		}
	}
	// The runs' payloads reach the samples in the order the runs ended,
	// an export each, so a sample holding k exports holds the next k
	// runs' events. Matched by order, not by time: under load a run's
	// event may be stamped after the sample that took its payload.
	export, next, checked := uint64(cfg.Sides[1].Size), 0, 0
	for _, s := range samples {
		k := int(s.Bytes / export)
		if s.Bytes == 0 || next+k > len(runs) {
			continue
		}
		var secs float64
		for _, e := range runs[next : next+k] {
			v, _ := strconv.ParseFloat(strings.TrimRight(strings.Fields(e.To)[0], "s,"), 64)
			secs += v
		}
		next += k
		checked++
		// The bound catches what this guards against, a rate over the
		// sample's time (1.5-4x off). Within it is a mismatch left open: a
		// CI run read 0.84 in one sample of six (a run of 0.208 s whose
		// sample's rate was over 0.247 s), which order-matched events do
		// not explain.
		if got := float64(s.ThroughputBps) * secs / float64(s.Bytes); !s.ThroughputBps.Known() || got < 0.75 || got > 1.33 {
			t.Errorf("sample at %.2f s: %d bytes, throughput %v over runs of %.3f s: throughput × run time is %.2f of the bytes, want 1",
				s.T, s.Bytes, s.ThroughputBps, secs, got)
		}
	}
	if checked == 0 {
		t.Fatalf("no sample of B held a finished run (%d runs, %d samples)", len(runs), len(samples))
	}
}

// TestExecRunEventSaysRunningTime: in alternate mode a client run that the
// other side's turn stopped for part of it has its running time beside
// its wall time in its event: the wall time alone (1.805 s) read as a run
// three times as slow as the 0.750 s whose throughput the sample has.
func TestExecRunEventSaysRunningTime(t *testing.T) {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	cfg.Duration = 0                                      // until three runs ended (at most 30 s)
	cfg.Sides[1].Exec = `/bin/sh -c 'sleep 1.5' sh {uri}` // longer than a turn (1 s)
	p := startPair(t, cfg)
	limit := time.AfterFunc(30*time.Second, func() { p.Stop() })
	defer limit.Stop()
	var runs []string
	for u := range p.Updates() {
		if e := u.Event; e != nil && e.Side == "B" && e.Setting == model.ExecRunEvent {
			if runs = append(runs, e.To); len(runs) == 3 {
				p.Stop()
			}
		}
	}
	if len(runs) == 0 {
		t.Fatal("no client run ended in 30 s")
	}
	paused := 0
	for _, to := range runs {
		var wall, running float64
		n, _ := fmt.Sscanf(to, "%fs, %fs running", &wall, &running)
		switch {
		case n == 2 && running < wall:
			paused++
		case n == 2 || n == 1 && to != strconv.FormatFloat(wall, 'f', 3, 64)+"s":
			t.Errorf("event %q: want a wall time, and a shorter running time or none", to)
		}
	}
	if paused == 0 {
		t.Errorf("client runs of 1.5 s, longer than a turn: events %q, none with its running time", runs)
	}
}
