package engine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	inchild "nbdscope/engine/child"
	"nbdscope/internal/childtest"
	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform"
)

// TestMain: the test binary doubles as the nbdscope binary for its
// children (engine/child, imported as inchild: the engine's own handle on
// a child process is named child), and every test leaves no goroutine
// behind: a pair that was stopped has no watcher, sampler, pipe reader or
// child waiter left (issue 11).
func TestMain(m *testing.M) { childtest.Main(m, inchild.RunChild) }

// testConfig is the tests' usual pair (childtest.Config, which the sweep's
// tests share).
func testConfig() model.Config { return childtest.Config() }

var testFacts = platform.Facts{OS: "linux", Cores: 8}

func startPair(t *testing.T, cfg model.Config) *Pair {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	p, err := StartWith(ctx, cfg, Options{Facts: &testFacts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if _, err := os.Stat(p.dir); !os.IsNotExist(err) {
			t.Errorf("socket directory %s left behind", p.dir)
		}
	})
	return p
}

// waitFor reads updates until cond holds or the deadline passes.
func waitFor(t *testing.T, p *Pair, d time.Duration, what string, cond func(model.Update) bool) model.Update {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case u, ok := <-p.Updates():
			if !ok {
				t.Fatalf("updates closed while waiting for %s", what)
			}
			if cond(u) {
				return u
			}
		case <-deadline:
			t.Fatalf("no %s within %v", what, d)
		}
	}
}

func activeSample(side model.SideID) func(model.Update) bool {
	return func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == side && u.Sample.Active && u.Sample.Bytes > 0
	}
}

func TestPairSamplesAndLiveChanges(t *testing.T) {
	p := startPair(t, testConfig())
	u := waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
	s := u.Sample
	if !s.ThroughputBps.Known() || s.ThroughputBps <= 0 || s.Server == nil || !s.Client.RecvCallsPer2MiB.Known() {
		t.Fatalf("sample figures: %+v", s)
	}
	if s.Connections != 1 || s.SndBuf.ServerEffective == 0 || s.SndBuf.ClientEffective == 0 {
		t.Fatalf("sample settings: %+v", s)
	}
	waitFor(t, p, 10*time.Second, "B sample", activeSample("B"))

	// Server send buffer, read back from the live socket.
	if err := applyText(p, 1, model.SetSndBuf, "64k"); err != nil {
		t.Fatal(err)
	}
	_, want, _ := nbd.ProbeSocketBuffer("unix", nbd.SendBuf, 64<<10)
	waitFor(t, p, 5*time.Second, "B sample with 64k", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "B" && u.Sample.SndBuf.ServerEffective == want && u.Sample.SndBuf.ServerRequested == "64k"
	})
	// Connection count, in the samples.
	if err := applyText(p, 0, model.SetConnections, "3"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 5*time.Second, "A with 3 connections", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "A" && u.Sample.Connections == 3 && u.Sample.Bytes > 0
	})
	if err := applyText(p, 0, model.SetConnections, "1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 5*time.Second, "A back to 1 connection", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "A" && u.Sample.Connections == 1 && u.Sample.Bytes > 0
	})
	for _, ch := range []textChange{
		{0, model.SetRequestSize, "64k"},
		{0, model.SetInFlight, "4"},
		{0, model.SetWorkload, string(model.WorkRandRead)},
		{1, model.SetClientRcvBuf, "1m"},
		{1, model.SetWorkload, string(model.WorkWrite)},
	} {
		if err := applyText(p, ch.side, ch.setting, ch.value); err != nil {
			t.Fatalf("%v: %v", ch, err)
		}
	}
	waitFor(t, p, 5*time.Second, "B write samples", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "B" && u.Sample.Bytes > 0 && u.Sample.Server != nil && u.Sample.Server.RecvCallsPer2MiB.Known()
	})
	if err := applyText(p, 0, model.SetConnections, "65"); err == nil {
		t.Fatal("65 connections accepted")
	}
	if err := p.SetPaused(0, true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 5*time.Second, "paused A", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "A" && !u.Sample.Active && u.Sample.Bytes == 0
	})
	rep := p.Report()
	if len(rep.Events) < 8 {
		t.Fatalf("events %+v", rep.Events)
	}
	// What the controller itself spent, in run's JSON.
	if c := rep.ControllerCoresBusy; c == nil || !(*c > 0) || *c > 2 {
		t.Errorf("controller cores busy %v, want a measured share of the run", c)
	}
	if js, err := json.Marshal(rep); err != nil || !strings.Contains(string(js), `"controller_cores_busy":`) {
		t.Errorf("run's JSON lacks the controller's CPU (%v)", err)
	}
	if p.Config().Sides[0].InFlight != 4 || p.Config().Sides[1].SndBuf.String() != "64k" {
		t.Fatalf("config not updated: %+v", p.Config())
	}
	for _, sd := range rep.Sides {
		if sd.Summary.Bytes == 0 || !sd.Summary.ThroughputBps.Known() || sd.Summary.ErrorCount() != 0 {
			t.Fatalf("summary %s: %+v", sd.Name, sd.Summary)
		}
	}
}

func TestAlternateModeTakesTurns(t *testing.T) {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	p := startPair(t, cfg)
	seen := map[model.SideID]bool{}
	waitFor(t, p, 10*time.Second, "both sides active", func(u model.Update) bool {
		if u.Sample != nil && u.Sample.Active && u.Sample.Bytes > 0 {
			seen[u.Sample.Side] = true
		}
		return seen["A"] && seen["B"]
	})
}

func TestCrashReportAndRestart(t *testing.T) {
	p := startPair(t, testConfig())
	waitFor(t, p, 10*time.Second, "B sample", activeSample("B"))
	srv, _ := p.sides[1].children()
	victim := srv.proc.Process()
	victim.Signal(syscall.SIGKILL)
	u := waitFor(t, p, 5*time.Second, "crash report", func(u model.Update) bool { return u.Crash != nil })
	if u.Crash.Side != "B" || u.Crash.Role != model.RoleServer || !strings.Contains(u.Crash.Status, "killed") {
		t.Fatalf("crash %+v", u.Crash)
	}
	// A keeps running.
	waitFor(t, p, 5*time.Second, "A after B's crash", activeSample("A"))
	if err := p.Restart(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 10*time.Second, "B after restart", activeSample("B"))

	// A load process dying is reported as such.
	_, ld := p.sides[0].children()
	victim = ld.proc.Process()
	victim.Signal(syscall.SIGKILL)
	u = waitFor(t, p, 5*time.Second, "load crash", func(u model.Update) bool { return u.Crash != nil })
	if u.Crash.Side != "A" || u.Crash.Role != model.RoleLoad {
		t.Fatalf("crash %+v", u.Crash)
	}
}

// TestScriptedChange: a scripted change takes effect within one sample
// interval of its time (design.md), counted in samples, not seconds: the
// loop applies it at its first tick at or after that time, before the
// tick's polls. So side B's samples measured before the event carry the
// old buffer and at most one of them (the one being measured when the time
// came) ends after it; every sample after the event carries the new one,
// the first marked as straddling a change. The run's clock starts when the
// loads do, so a slow start (seconds under -race on a loaded machine) no
// longer makes a change at 1 s land at 4.
func TestScriptedChange(t *testing.T) {
	cfg := testConfig()
	cfg.Duration = model.Duration(2 * time.Second)
	ch := parseAt(t, "1s:b.sndbuf=64k")
	cfg.Script = []model.Change{ch}
	at := ch.At.D().Seconds()
	p := startPair(t, cfg)
	var ev *model.Event
	var samples []model.Sample
	for u := range p.Updates() {
		if u.Event != nil {
			ev = u.Event
		}
		if u.Sample != nil && u.Sample.Side == "B" {
			samples = append(samples, *u.Sample)
		}
	}
	if ev == nil || ev.Side != "B" || ev.Setting != model.SetSndBuf || ev.To != "64k" || ev.T < at {
		t.Fatalf("event %+v, want B's sndbuf to 64k at or after %vs", ev, at)
	}
	lateOld, after := 0, 0
	for _, smp := range samples {
		isNew := smp.Settings.SndBuf == "64k"
		if isNew != (smp.T > ev.T) {
			t.Errorf("sample at %.3fs has sndbuf %s, event at %.3fs", smp.T, smp.Settings.SndBuf, ev.T)
		}
		if !isNew && smp.T >= at {
			lateOld++
		}
		if isNew {
			if after == 0 && !smp.Changed {
				t.Errorf("first sample after the change (%.3fs) not marked changed", smp.T)
			}
			after++
		}
	}
	// Samples before the change's time show the clock ran with the load.
	before := len(samples) - after
	if lateOld > 1 || after == 0 || before == lateOld {
		t.Errorf("%d samples with the old buffer, %d of them after %vs (want some before, at most 1 after), %d with the new one (want some); event at %.3fs",
			before, lateOld, at, after, ev.T)
	}
	t.Logf("event at %.3fs; B samples: %d with the old buffer (%d after %vs), %d with the new", ev.T, before, lateOld, at, after)
}

// TestScriptFiresInTimeOrder: changes given out of order (--at 1.5s:… then
// --at 0.5s:…) all fire, each at its own time: the loop used to look only
// at the first listed, so an earlier change listed second waited behind it.
func TestScriptFiresInTimeOrder(t *testing.T) {
	cfg := testConfig()
	cfg.Duration = model.Duration(2500 * time.Millisecond)
	late := parseAt(t, "1.5s:b.sndbuf=64k")
	early := parseAt(t, "0.5s:a.sndbuf=128k")
	cfg.Script = []model.Change{late, early}
	p := startPair(t, cfg)
	var evs []model.Event
	for u := range p.Updates() {
		if u.Event != nil && u.Event.Setting == model.SetSndBuf {
			evs = append(evs, *u.Event)
		}
	}
	if len(evs) != 2 || evs[0].Side != "A" || evs[1].Side != "B" || evs[0].T > evs[1].T {
		t.Fatalf("events %+v, want A's change (0.5s) and then B's (1.5s)", evs)
	}
	if evs[0].T >= late.At.D().Seconds() {
		t.Fatalf("A's change at %.3fs waited for B's at %v", evs[0].T, late.At.D())
	}
}

// Killing the controller must end its children within a second.
func TestChildrenDieWithController(t *testing.T) {
	if os.Getenv("NBDSCOPE_TEST_CONTROLLER") == "1" {
		cfg := testConfig()
		p, err := StartWith(context.Background(), cfg, Options{Facts: &testFacts})
		if err != nil {
			os.Exit(3)
		}
		var pids []string
		for _, s := range p.sides {
			pids = append(pids, strconv.Itoa(s.server.pid()), strconv.Itoa(s.load.pid()))
		}
		os.Stdout.WriteString(strings.Join(pids, " ") + " " + p.dir + "\n")
		time.Sleep(time.Minute)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildrenDieWithController$")
	cmd.Env = append(os.Environ(), "NBDSCOPE_TEST_CONTROLLER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 4096)
	var line string
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(line, "\n") && time.Now().Before(deadline) {
		n, err := out.Read(buf)
		line += string(buf[:n])
		if err != nil {
			break
		}
	}
	f := strings.Fields(line)
	if len(f) != 5 {
		t.Fatalf("controller said %q", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killed := time.Now()
	// The one-second promise is for the real binary on an idle machine.
	// What this guards against is children that outlive the controller
	// for good; on a busy machine the kernel's notice and the children's
	// exits can take seconds, and the race detector makes exits slower
	// still.
	limit := 5 * time.Second
	if raceEnabled {
		limit = 20 * time.Second
	}
	for _, ps := range f[:4] {
		pid, _ := strconv.Atoi(ps)
		for alive(pid) && time.Since(killed) < limit {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("child %d still alive %v after the controller was killed", pid, limit)
		}
	}
	t.Logf("children gone %v after the controller was killed", time.Since(killed).Round(time.Millisecond))
	// The sockets' directory goes with the servers' listeners: orphaned,
	// the last server to go removes it.
	if ents, _ := os.ReadDir(f[4]); len(ents) != 0 {
		t.Errorf("socket files left in %s: %v", f[4], ents)
	} else if _, err := os.Stat(f[4]); !os.IsNotExist(err) {
		t.Errorf("socket directory %s left behind (%v)", f[4], err)
	}
	os.RemoveAll(f[4])
}

// alive tells a running process from a gone or zombie one (a zombie has
// exited; only its parent, now init, has yet to reap it).
func alive(pid int) bool {
	state, _, err := testbin.ProcStat(pid)
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	return state != 'Z'
}

// textChange is a change in its text form, as a test writes it.
type textChange struct {
	side           int
	setting, value string
}

// parseAt parses a scripted change as --at would, failing the test on an
// error.
func parseAt(t *testing.T, at string) model.Change {
	t.Helper()
	ch, err := model.ParseAt(at)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// applyText parses a change at the edge, as a key or flag would, and
// applies it: a bad value fails either way.
func applyText(p *Pair, side int, setting, value string) error {
	ch, err := model.NewChange(side, setting, value)
	if err != nil {
		return err
	}
	return p.Apply(ch)
}

// TestStopTwiceAtOnce: two Stops at once (a run's time limit and the
// user's q, a signal and a defer) each return only once the pair is down:
// every child stopped, the socket directory gone. The second returned at
// once while the first was still stopping the children, and a test that
// stopped its pair from a timer found the directory left behind.
func TestStopTwiceAtOnce(t *testing.T) {
	p := startPair(t, testConfig())
	var wg sync.WaitGroup
	left := make(chan string, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Stop()
			if _, err := os.Stat(p.dir); !os.IsNotExist(err) {
				left <- p.dir
			}
		}()
	}
	wg.Wait()
	close(left)
	for dir := range left {
		t.Errorf("a Stop returned with the socket directory %s still there", dir)
	}
}
