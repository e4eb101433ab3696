package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/phrase"
)

// An exec side's command gets {size} (asked of the export, so a sweep
// preset's command works as a live side's) and {socket}; and its server's
// send buffer is known in every sample, though this client never holds a
// connection open at a poll (a real client connects anew for each run).
func TestExecSideSizeAndServerBuffer(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	cfg := testConfig()
	cfg.Duration = model.Duration(2 * time.Second)
	cfg.Sides[1].Size = 64 << 20
	cfg.Sides[1].SndBuf, _ = model.ParseBuf("1m")
	cfg.Sides[1].Exec = `/bin/sh -c 'echo {size} {socket} >> ` + seen + `; sleep 0.05'`
	p := startPair(t, cfg)
	var withBuf, active int
	for u := range p.Updates() {
		if s := u.Sample; s != nil && s.Side == "B" && s.Active {
			active++
			if s.SndBuf.ServerEffective >= 1<<20 {
				withBuf++
			}
		}
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the command never ran: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	f := strings.Fields(lines[0])
	if len(f) != 2 || f[0] != "67108864" || !strings.HasSuffix(f[1], ".sock") {
		t.Fatalf("the command saw %q, want the export's size 67108864 and the socket", lines[0])
	}
	if active == 0 || withBuf != active {
		t.Errorf("B's server send buffer known in %d of %d active samples, want all", withBuf, active)
	}
}

// An exec side left at workload write whose client reads (nbdcopy {uri}
// null:): its figures are a read's, by what its server saw (the payload
// it sent, not received), whatever --workload says; its receiver is the
// client, its sender's buffer the server's, and a warning says so once.
// The side's workload setting decided them before, and nothing warned.
func TestExecSideDirectionIsWhatTheClientDid(t *testing.T) {
	testbin.Need(t, "apt-get install libnbd-bin", "nbdcopy")
	cfg := testConfig()
	cfg.Duration = 0 // until B's client has moved payload in a few samples (at most 30 s)
	cfg.Sides[1].Size = 256 << 20
	cfg.Sides[1].Workload = model.WorkWrite
	cfg.Sides[1].Exec = "nbdcopy {uri} null:"
	p := startPair(t, cfg)
	limit := time.AfterFunc(30*time.Second, func() { p.Stop() })
	defer limit.Stop()
	var moved, asRead int
	var warned []model.Warning
	for u := range p.Updates() {
		if s := u.Sample; s != nil && s.Side == "B" && s.Bytes > 0 && !s.Changed {
			if moved++; moved == 5 {
				p.Stop() // the rest of its updates drain below
			}
			if s.Direction() == model.FlowRead && s.Receiver() == &s.Client && s.Sender() == s.Server && s.ReceiverName() == "client" {
				asRead++
			}
		}
		if w := u.Warning; w != nil && w.Side == "B" && w.Kind == model.WarnExecFlow {
			warned = append(warned, *w)
		}
	}
	if moved == 0 || asRead != moved {
		t.Errorf("B (nbdcopy reading, workload write): %d of %d samples that moved payload read as a read", asRead, moved)
	}
	if len(warned) != 1 || !strings.Contains(phrase.WarningLong(warned[0]), "the client read") || !strings.Contains(phrase.WarningLong(warned[0]), "write") {
		t.Errorf("warnings of the client's direction: %+v, want one saying the client read though the workload is write", warned)
	}
	rep := p.Report()
	sd := rep.Sides[1]
	if sd.Summary.Direction() != model.FlowRead || sd.Summary.ReceiverName() != "client" || sd.Summary.ReceiverNA() != nil {
		t.Errorf("B's summary: flow %q, receiver %q (%+v)", sd.Summary.Direction(), sd.Summary.ReceiverName(), sd.Summary.ReceiverNA())
	}
	for _, g := range sd.Segments {
		if g.Bytes > 0 && g.Direction() != model.FlowRead {
			t.Errorf("B's segment %.2f–%.2f: flow %q, want read", g.From, g.To, g.Direction())
		}
	}
}
