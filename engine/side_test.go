package engine

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"nbdscope/engine/childproc"
	"nbdscope/engine/wire"
	"nbdscope/internal/leakcheck"
	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/phrase"
)

// childSettings asks a running child what it runs with.
func childSettings(t *testing.T, c *child) map[string]string {
	t.Helper()
	m, err := c.call(wire.Cmd{Op: "get"}, 10*time.Second)
	if err != nil {
		t.Fatalf("%s %s get: %v", c.side, c.role, err)
	}
	return m.Settings
}

// wantChildSettings is what a side's children should report for sc, in
// their terms (a buffer as its request in bytes), in mode on the allowed
// cpus.
func wantChildSettings(sc model.SideConfig, mode model.Mode, cpus []int) map[string]string {
	return map[string]string{
		model.SetSndBuf:       strconv.Itoa(model.BufRequest(sc.SndBuf)),
		model.SetClientSndBuf: strconv.Itoa(model.BufRequest(sc.ClientSndBuf)),
		model.SetClientRcvBuf: strconv.Itoa(model.BufRequest(sc.ClientRcvBuf)),
		model.SetServerRcvBuf: strconv.Itoa(model.BufRequest(sc.ServerRcvBuf)),
		model.SetConnections:  strconv.Itoa(sc.Connections),
		model.SetRequestSize:  strconv.Itoa(sc.RequestSize),
		model.SetInFlight:     strconv.Itoa(sc.InFlight),
		model.SetWorkload:     string(sc.Workload),
		model.SetReadPercent:  strconv.Itoa(sc.ReadPercent),
		model.SetConsume:      sc.Get(model.SetConsume),
		model.SetHashThreads:  strconv.Itoa(model.ResolveHashThreads(sc, mode, cpus)),
	}
}

// drainUntil reads updates until stop is closed, so a long test cannot
// fill the channel; the returned channel closes when it has stopped.
func drainUntil(p *Pair, stop chan struct{}) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-p.Updates():
			case <-stop:
				return
			}
		}
	}()
	return done
}

// TestConcurrentChangesOneSide (issue 11 §3): 100 changes of different
// settings of one side, made at once, while the mode changes too. Afterwards the configuration the
// pair reports is what its children run with, setting by setting, every
// change was reported once, and each setting's last Event is its value.
// A change made from a copy of the side written back whole (as Apply did)
// loses the changes that overlapped it, and this fails. The pair was
// started, changed and stopped: nothing of it may be left running.
func TestConcurrentChangesOneSide(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	values := map[string][]string{
		model.SetSndBuf:       {"64k", "128k", "1m"},
		model.SetClientSndBuf: {"64k", "256k", "default"},
		model.SetClientRcvBuf: {"128k", "1m", "default"},
		model.SetServerRcvBuf: {"256k", "default", "512k"},
		model.SetConnections:  {"2", "3", "1"},
		model.SetRequestSize:  {"64k", "128k", "256k"},
		model.SetInFlight:     {"3", "1", "2"},
		model.SetWorkload:     {string(model.WorkWrite), string(model.WorkMixed), string(model.WorkRandRead)},
		model.SetReadPercent:  {"10", "90", "50"},
		model.SetConsume:      {string(model.ConsumeNone), string(model.ConsumeScan), string(model.ConsumeCopy)},
		model.SetHashThreads:  {"2", "auto", "3", "auto"},
		model.SetPlacement:    {string(model.PlaceShared), string(model.PlaceOS), string(model.PlaceSplit)},
	}
	settings := make([]string, 0, len(values))
	for s := range values {
		settings = append(settings, s)
	}
	p := startPair(t, testConfig())
	waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
	fourCores(p)
	stopDrain := make(chan struct{})
	drained := drainUntil(p, stopDrain)

	const changes = 100
	var wg sync.WaitGroup
	errs := make(chan error, changes+4)
	for i, mode := range []model.Mode{model.ModeAlternate, model.ModeConcurrent, model.ModeAlternate, model.ModeConcurrent} {
		// The mode changes too: auto hash threads follow it.
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			if err := p.SetMode(mode); err != nil {
				errs <- err
			}
		}()
	}
	for i := range changes {
		setting := settings[i%len(settings)]
		v := values[setting][(i/len(settings))%len(values[setting])]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := applyText(p, 0, setting, v); err != nil {
				errs <- fmt.Errorf("%s=%s: %w", setting, v, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	cfg := p.Config()
	sc := cfg.Sides[0]
	srv, ld := p.sides[0].children()
	got := childSettings(t, ld)
	for k, v := range childSettings(t, srv) {
		got[k] = v
	}
	for setting, want := range wantChildSettings(sc, cfg.Mode, p.cpus) {
		if got[setting] != want {
			t.Errorf("%s: Config() says %q (%s), the children run with %q", setting, sc.Get(setting), want, got[setting])
		}
	}
	last := map[string]string{}
	n := 0
	for _, e := range p.Report().Events {
		if e.Side == "A" && e.Setting != model.SetPaused {
			last[e.Setting] = e.To
			n++
		}
	}
	if n != changes {
		t.Errorf("%d events for side A, want %d", n, changes)
	}
	for setting, to := range last {
		if sc.Get(setting) != to {
			t.Errorf("%s: the last event set %q, Config() says %q", setting, to, sc.Get(setting))
		}
	}
	close(stopDrain)
	<-drained
	p.Stop()
}

// TestStopWithoutReader (issue 11 §4): with the updates channel full and
// nobody reading it, Stop still returns promptly, the channel is closed
// after it, and nothing of the pair is left running.
func TestStopWithoutReader(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	cfg := testConfig()
	cfg.Interval = model.Duration(50 * time.Millisecond)
	p := startPair(t, cfg)
	// Fill the channel (the loop is its only closer and runs until Stop).
	for full := false; !full; {
		select {
		case p.updates <- model.Update{Warning: &model.Warning{Kind: "test", Text: "filler"}}:
		default:
			full = true
		}
	}
	// Wait until a sample is due into the full channel: the recorder
	// notes an update before sending it.
	samples := func() int { p.rec.mu.Lock(); defer p.rec.mu.Unlock(); return len(p.rec.samples) }
	deadline := time.Now().Add(10 * time.Second)
	for base := samples(); samples() < base+2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no sample noted within 10 s")
		}
	}
	// The bug this guards against is a permanent hang, not a slow Stop:
	// allow as long as TestStopWithFrozenChild does, which a busy machine
	// running the race detector and every package at once can need for
	// the children's exits.
	const limit = 15 * time.Second
	start := time.Now()
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(limit):
		t.Fatalf("Stop did not return within %v with nobody reading updates", limit)
	}
	t.Logf("Stop returned after %v with a full updates channel", time.Since(start).Round(time.Millisecond))
	n := 0
	for range p.Updates() { // closed: this ends
		n++
	}
	if n != cap(p.updates) {
		t.Errorf("read %d updates after Stop, want the %d that filled the channel", n, cap(p.updates))
	}
}

// TestEmitAfterClose: an update emitted after the run ended (a crash
// noticed late, a warning) is recorded, never sent on the closed channel.
func TestEmitAfterClose(t *testing.T) {
	p := &Pair{updates: make(chan model.Update, 1), ending: make(chan struct{})}
	p.rec = &recorder{p: p}
	p.closeUpdates()
	p.raise(model.Warn("A", model.TargetUnattributed{}))
	if _, ok := <-p.updates; ok {
		t.Fatal("an update arrived after the close")
	}
	if len(p.rec.warnings) != 1 {
		t.Fatalf("recorded %d warnings, want the late one", len(p.rec.warnings))
	}
}

// fakeChild is a child that speaks the protocol through pipes: answer gets
// each command and returns the reply line to send back.
func fakeChild(t *testing.T, role, side string, answer func(wire.Cmd) wire.Msg) *child {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	proc := childproc.Over(side+" "+role, inW, outR)
	c := &child{proc: proc, role: role, side: side, exited: proc.Exited()}
	go func() {
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			var cmd wire.Cmd
			json.Unmarshal(sc.Bytes(), &cmd)
			m := answer(cmd)
			m.Seq = cmd.Seq
			b, _ := json.Marshal(m)
			outW.Write(append(b, '\n'))
		}
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

// TestTurnsReportChildErrors (issue 11 §4): a load that refuses to pause
// or resume is reported, not ignored.
func TestTurnsReportChildErrors(t *testing.T) {
	refuse := func(cmd wire.Cmd) wire.Msg {
		return wire.Msg{Type: "error", Err: "gate jammed"}
	}
	a := &side{idx: 0, name: "A", load: fakeChild(t, model.RoleLoad, "A", refuse)}
	b := &side{idx: 1, name: "B", load: fakeChild(t, model.RoleLoad, "B", func(wire.Cmd) wire.Msg { return wire.Msg{Type: "reply"} })}
	var mu sync.Mutex
	var warned []string
	tr := newTurns(model.ModeConcurrent, 100*time.Millisecond, [2]*side{a, b}, func(s *side, what model.WarningParams) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, s.name+": "+phrase.WarningLong(model.Warn(s.id, what)))
	})
	tr.setPaused(0, true)
	tr.setPaused(0, false)
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 2 || !strings.Contains(warned[0], "could not pause") || !strings.Contains(warned[1], "could not resume") {
		t.Fatalf("warnings %q, want side A's failed pause and resume", warned)
	}
	for _, w := range warned {
		if !strings.HasPrefix(w, "A: ") || !strings.Contains(w, "gate jammed") {
			t.Errorf("warning %q does not name side A and the child's error", w)
		}
	}
}

// TestDecideRuns: who runs in each mode.
func TestDecideRuns(t *testing.T) {
	cases := []struct {
		mode     model.Mode
		turn     int
		paused   [2]bool
		up, want [2]bool
	}{
		{model.ModeConcurrent, 0, [2]bool{}, [2]bool{true, true}, [2]bool{true, true}},
		{model.ModeConcurrent, 0, [2]bool{false, true}, [2]bool{true, true}, [2]bool{true, false}},
		{model.ModeAlternate, 0, [2]bool{}, [2]bool{true, true}, [2]bool{true, false}},
		{model.ModeAlternate, 1, [2]bool{}, [2]bool{true, true}, [2]bool{false, true}},
		{model.ModeAlternate, 1, [2]bool{false, true}, [2]bool{true, true}, [2]bool{true, false}}, // B paused: A need not idle
		{model.ModeAlternate, 1, [2]bool{}, [2]bool{true, false}, [2]bool{true, true}},            // B down: A runs (B has no load to run)
		{model.ModeAlternate, 0, [2]bool{true, true}, [2]bool{true, true}, [2]bool{false, false}},
	}
	for _, c := range cases {
		if got := decideRuns(c.mode, c.turn, c.paused, c.up); got != c.want {
			t.Errorf("decideRuns(%s, turn %d, paused %v, up %v) = %v, want %v", c.mode, c.turn, c.paused, c.up, got, c.want)
		}
	}
}

// childProcesses lists the live processes whose parent is this one (Linux).
func childProcesses(t *testing.T) []int {
	t.Helper()
	kids, err := testbin.ChildPIDs(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return kids
}

// TestStopDuringRestart: Stop while a side is spawning new children (a
// restart, a transport change) leaves no child running and no goroutine:
// the restart sees the run ended and stops what it started, and Stop
// waits for it.
func TestStopDuringRestart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lists child processes in /proc")
	}
	defer leakcheck.VerifyNone(t)
	p := startPair(t, testConfig())
	if n := len(childProcesses(t)); n != 4 {
		t.Fatalf("%d child processes running, want 4", n)
	}
	restarted := make(chan error, 1)
	go func() { restarted <- p.Restart(0) }()
	time.Sleep(20 * time.Millisecond) // let the restart begin spawning
	p.Stop()
	select {
	case err := <-restarted:
		t.Logf("restart during Stop: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Restart did not return within 10 s of Stop")
	}
	if kids := childProcesses(t); len(kids) != 0 {
		t.Fatalf("child processes %v still running after Stop", kids)
	}
	if err := p.Restart(1); err == nil {
		t.Fatal("Restart after Stop succeeded")
	}
}

// TestRestartBesideTCPSide: restarting a side whose unix socket is the
// only one in the pair's socket directory (the other side serves TCP)
// starts it again. The old server, told to stop, leaves the directory to
// the controller; it used to remove it once its socket was gone, so the new
// server had nowhere to bind.
func TestRestartBesideTCPSide(t *testing.T) {
	cfg := testConfig()
	cfg.Sides[1].Transport = model.TransportTCP
	p := startPair(t, cfg)
	stopDrain := make(chan struct{})
	drained := drainUntil(p, stopDrain)
	defer func() { close(stopDrain); <-drained }()
	for i := range 2 {
		if err := p.Restart(0); err != nil {
			t.Fatalf("restart %d of side A: %v", i+1, err)
		}
	}
	if _, err := os.Stat(p.dir); err != nil {
		t.Fatalf("socket directory after the restarts: %v", err)
	}
}

// fourCores makes placement and auto hash threads work out as on four
// cores, so mode and placement changes move the threads (1 or 3). Holding
// a process to a core this machine lacks fails, with a warning.
func fourCores(p *Pair) {
	if len(p.cpus) < 4 {
		p.cpus = []int{0, 1, 2, 3}
	}
}

// TestAutoHashThreadsFollowMode: hash threads left to auto follow the mode
// and the placement they are resolved from, in the load itself.
func TestAutoHashThreadsFollowMode(t *testing.T) {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	cfg.Sides[0].Placement = model.PlaceSplit
	p := startPair(t, cfg)
	fourCores(p)
	stopDrain := make(chan struct{})
	drained := drainUntil(p, stopDrain)
	defer func() { close(stopDrain); <-drained }()
	check := func(what, want string) {
		t.Helper()
		_, ld := p.sides[0].children()
		if got := childSettings(t, ld)[model.SetHashThreads]; got != want {
			t.Fatalf("%s: the load hashes with %s threads, want %s", what, got, want)
		}
	}
	steps := []struct {
		what string
		do   func() error
		want string
	}{
		{"concurrent", func() error { return p.SetMode(model.ModeConcurrent) }, "1"},
		{"alternate", func() error { return p.SetMode(model.ModeAlternate) }, "3"},
		{"shared", func() error { return applyText(p, 0, model.SetPlacement, string(model.PlaceShared)) }, "1"},
		{"split", func() error { return applyText(p, 0, model.SetPlacement, string(model.PlaceSplit)) }, "3"},
		{"explicit 2", func() error { return applyText(p, 0, model.SetHashThreads, "2") }, "2"},
		{"explicit survives a mode", func() error { return p.SetMode(model.ModeConcurrent) }, "2"},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		check(st.what, st.want)
	}
}

// TestStopWithFrozenChild: a child that answers nothing (stopped by
// SIGSTOP) while the loop polls it does not hold Stop beyond the stop
// grace; it is killed, and nothing is left running.
func TestStopWithFrozenChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lists child processes in /proc")
	}
	defer leakcheck.VerifyNone(t)
	p := startPair(t, testConfig())
	waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
	_, ld := p.sides[0].children()
	if err := ld.proc.Process().Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a poll is now waiting on it
	start := time.Now()
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		ld.proc.Process().Signal(syscall.SIGKILL)
		t.Fatal("Stop did not return within 15 s with a frozen child")
	}
	t.Logf("Stop returned after %v with a frozen load child", time.Since(start).Round(time.Millisecond))
	if kids := childProcesses(t); len(kids) != 0 {
		t.Fatalf("child processes %v still running after Stop", kids)
	}
}

// side keeps its children, its configuration and its locks; the
// accounting is its meter's (engine/meter). It held 36 fields, most of
// them accounting.
func TestSideHoldsNoAccounting(t *testing.T) {
	if n := reflect.TypeFor[side]().NumField(); n > 25 {
		t.Errorf("side has %d fields, at most 25: does accounting belong in engine/meter?", n)
	}
}
