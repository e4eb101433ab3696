package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
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
