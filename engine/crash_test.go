package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/internal/childtest"
	"nbdscope/model"
)

// startTargetProcess runs a server child on a unix socket: an external
// target the test can SIGKILL. It returns the process and the target's URI.
func startTargetProcess(t *testing.T) (*os.Process, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "t.sock")
	p := childtest.StartServer(t, wire.ServerSpec{Socket: sock, Settings: wire.Start{model.SetBackend: {Str: "null"}, model.SetSize: {Int: 1 << 30}, model.SetTransport: {Str: "unix"}}})
	var m wire.Msg
	if err := json.Unmarshal([]byte(p.Ready), &m); err != nil || m.Type != "ready" || m.URI == "" {
		t.Fatalf("target: ready line %q (%v)", p.Ready, err)
	}
	return p.Cmd.Process, m.URI
}

// TestTargetKilledMidRun: the external target of side A dies by SIGKILL
// while A's load runs. Whatever the load was doing (writing into the dead
// socket: EPIPE; reading from it: EOF or ECONNRESET) its process reports
// the loss, naming the target, and exits non-zero; the crash says so and
// the run is marked partial with that reason. Before, a write ended the
// load with status 0 and no word (SIGPIPE was taken for a stop request),
// and a read left it running on dead connections.
func TestTargetKilledMidRun(t *testing.T) {
	for _, wl := range []model.Workload{model.WorkWrite, model.WorkRead} {
		t.Run(string(wl), func(t *testing.T) {
			victim, uri := startTargetProcess(t)
			cfg := testConfig()
			cfg.Duration = model.Duration(30 * time.Second)
			cfg.Sides[0].Target, cfg.Sides[0].Workload = uri, wl
			cfg.Sides[0].Connections = 2
			p := startPair(t, cfg)
			waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
			victim.Signal(syscall.SIGKILL)
			c := waitFor(t, p, 5*time.Second, "crash report", func(u model.Update) bool { return u.Crash != nil }).Crash
			if c.Side != "A" || c.Role != model.RoleLoad || c.Target != uri {
				t.Fatalf("crash %+v: want side A's load, target %s", c, uri)
			}
			if c.Status != "exit status 1" {
				t.Errorf("load ended with %q, want exit status 1", c.Status)
			}
			if !strings.Contains(c.Reason, uri) || !strings.Contains(c.Reason, "connection lost") {
				t.Errorf("reason %q: want the target %s and the connection lost", c.Reason, uri)
			}
			if !strings.Contains(strings.Join(c.Stderr, "\n"), uri) {
				t.Errorf("load's stderr does not name the target: %q", c.Stderr)
			}
			// B runs on; the report of the run so far is partial.
			waitFor(t, p, 5*time.Second, "B after A's crash", activeSample("B"))
			rep := p.Report()
			if !rep.Partial || !strings.Contains(rep.PartialReason, "side A load died") || !strings.Contains(rep.PartialReason, uri) {
				t.Fatalf("report partial=%v reason %q", rep.Partial, rep.PartialReason)
			}
			if got := rep.PartialCause(); got != "side A load died" {
				t.Errorf("PartialCause %q", got)
			}
			t.Logf("crash: %s", c.Text())
		})
	}
}

// TestOwnServerKilledMidRun: our own server child of side B dies by
// SIGKILL. Its load loses its connections at the same moment; the crash
// names the server (the cause), its target and how it ended.
func TestOwnServerKilledMidRun(t *testing.T) {
	cfg := testConfig()
	cfg.Duration = model.Duration(30 * time.Second)
	cfg.Sides[1].Workload = model.WorkWrite
	p := startPair(t, cfg)
	waitFor(t, p, 10*time.Second, "B sample", activeSample("B"))
	srv, _ := p.sides[1].children()
	victim, uri := srv.proc.Process(), p.sides[1].targetURI()
	victim.Signal(syscall.SIGKILL)
	c := waitFor(t, p, 5*time.Second, "crash report", func(u model.Update) bool { return u.Crash != nil }).Crash
	if c.Side != "B" || c.Role != model.RoleServer || c.Target != uri || !strings.Contains(c.Status, "killed") || c.Reason == "" {
		t.Fatalf("crash %+v: want B's server, killed, target %s", c, uri)
	}
	if txt := c.Text(); !strings.Contains(txt, uri) || !strings.Contains(txt, "killed") {
		t.Errorf("crash text %q", txt)
	}
	rep := p.Report()
	if !rep.Partial || !strings.Contains(rep.PartialReason, "side B server died (signal: killed)") {
		t.Fatalf("report partial=%v reason %q", rep.Partial, rep.PartialReason)
	}
	if len(rep.Crashes) != 1 {
		t.Errorf("%d crashes reported for one death: %+v", len(rep.Crashes), rep.Crashes)
	}
}

// TestStoppedBeforeDurationIsPartial: a run stopped before its duration
// (ctrl+c in 'run') is partial; one that ran its duration is not.
func TestStoppedBeforeDurationIsPartial(t *testing.T) {
	cfg := testConfig()
	cfg.Duration = model.Duration(30 * time.Second)
	p := startPair(t, cfg)
	waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
	p.Stop()
	for range p.Updates() {
	}
	rep := p.Report()
	if !rep.Partial || !strings.HasPrefix(rep.PartialReason, "interrupted after ") || !strings.HasSuffix(rep.PartialReason, "of 30s") {
		t.Fatalf("stopped run: partial=%v reason %q", rep.Partial, rep.PartialReason)
	}

	cfg.Duration = model.Duration(500 * time.Millisecond)
	p = startPair(t, cfg)
	for range p.Updates() {
	}
	if rep := p.Report(); rep.Partial || rep.PartialReason != "" {
		t.Fatalf("complete run: partial=%v reason %q", rep.Partial, rep.PartialReason)
	}
}

// TestSettleWaitsForCrashReport: a run's last look at its children
// (settle, when its duration is over) waits for a crash report still in
// flight. A load killed by SIGKILL is reported only after crashGrace (its
// server may be dying too, and would be the cause); before, a run whose
// duration ended meanwhile reported itself complete.
func TestSettleWaitsForCrashReport(t *testing.T) {
	p := startPair(t, testConfig())
	stopDrain := make(chan struct{})
	drained := drainUntil(p, stopDrain)
	defer func() { close(stopDrain); <-drained }()
	_, ld := p.sides[0].children()
	ld.proc.Kill()
	<-ld.exited
	p.settle() // within crashGrace of the exit: the report is still pending
	rep := p.Report()
	if len(rep.Crashes) != 1 || rep.Crashes[0].Side != "A" || rep.Crashes[0].Role != model.RoleLoad || !rep.Partial {
		t.Fatalf("report after settle: partial %v, crashes %+v", rep.Partial, rep.Crashes)
	}
}
