package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
)

// testPanel is the panel of side idx of the default configuration, in
// the default styles.
func testPanel(idx int) panel {
	return panel{com: &common{styles: DefaultStyles()}, idx: idx, cfg: model.DefaultConfig().Sides[idx]}
}

// TestPanelData: what a panel shows is computed from its side's state
// without rendering anything.
func TestPanelData(t *testing.T) {
	p := testPanel(1)
	d := p.data()
	if d.fig.tput.Known() || d.errors != na || d.placed || d.warnings != nil || d.server.eff != 0 {
		t.Errorf("before any sample: %+v", d)
	}
	s := sample("B", 1, true)
	s.Errors = ptr(uint64(3))
	p.observe(s)
	p.clamp = &model.Warning{Side: "B", Kind: model.WarnClamp, Text: "clamped", Fix: "sudo sysctl"}
	d = p.data()
	if !d.server.clamped || d.server.eff != 425984 || d.client.clamped || d.clientRcv.eff != 212992 {
		t.Errorf("buffers: %+v %+v %+v", d.server, d.client, d.clientRcv)
	}
	if d.fig.tput != s.ThroughputBps || d.errors != "3" || !d.placed || d.loadCPUs != "0" || d.serverCPUs != "1" {
		t.Errorf("figures: tput %v errors %q placed %v %q/%q", d.fig.tput, d.errors, d.placed, d.loadCPUs, d.serverCPUs)
	}
	if len(d.warnings) != 1 || d.warnings[0].Text != "clamped" {
		t.Errorf("warnings: %+v", d.warnings)
	}
	// An external target: its buffer is not ours, the transport says so.
	p.cfg.Target = "nbd://example:10809"
	d = p.data()
	if d.server.req != na || d.transport != "external nbd://example:10809" {
		t.Errorf("external: req %q transport %q", d.server.req, d.transport)
	}
}

// TestPanelRowsOf: a panelData value renders on its own, narrow and wide,
// with n/a for what is not known and the warnings last.
func TestPanelRowsOf(t *testing.T) {
	p := panel{com: &common{styles: DefaultStyles()}}
	u := model.Unknown
	d := panelData{
		server:      bufData{req: "2m", eff: 4 << 20},
		client:      bufData{req: "default", eff: 212992},
		clientRcv:   bufData{req: "1m", eff: 1 << 20, clamped: true},
		connections: 2, inFlight: 8, requestSize: 2 << 20,
		workload: "read", consume: "scan", transport: "unix", placement: "split",
		fig: panelFigures{recv: "client", send: "server", tput: model.Figure(1 << 30), recvCalls: 1.5,
			recvEAGAIN: u, sendCalls: u, sendEAGAIN: u, cliCores: u, cliPerGiB: u, srvCores: u, srvPerGiB: u,
			cliWake: u, srvWake: u, p50: u, p99: u, cpu: model.CPU{UserS: u, SysS: u, CoresBusy: u, SPerGiB: u},
			cliRun: u, cliWait: u, srvRun: u, srvWait: u},
		errors:   na,
		warnings: []model.Warning{{Text: "B sndbuf clamped", Fix: "sudo sysctl -w x=1  (persist: somewhere)"}},
	}
	p.SetSize(40, 0)
	narrow := p.rowsOf(d)
	want := []string{
		"sndbuf  2m → 4m eff",
		"load    2 conns · 8×2m · read · unix",
		"rate    1.00 GiB/s · n/a cpu s/GiB",
		"calls   1.50 per 2MiB (client recv)",
		"cores   n/a cli + n/a srv · split",
		"fill    buf n/a · p99 n/a",
		"▲ B sndbuf clamped",
		"fix: sudo sysctl -w x=1",
	}
	if strings.Join(narrow, "\n") != strings.Join(want, "\n") {
		t.Errorf("narrow:\n%s\nwant\n%s", strings.Join(narrow, "\n"), strings.Join(want, "\n"))
	}
	p.SetSize(150, 0)
	wide := strings.Join(p.rowsOf(d), "\n")
	for _, s := range []string{"client rcvbuf 1m → 1m eff clamped", "connections   2", "throughput  1.00 GiB/s",
		"errors      n/a", "cores       n/a", "fix: sudo sysctl -w x=1  (persist: somewhere)"} {
		if !strings.Contains(wide, s) {
			t.Errorf("wide rows lack %q:\n%s", s, wide)
		}
	}
	p.SetSize(7, 0)
	if rows := p.rowsOf(d); rows != nil {
		t.Errorf("no room, yet rows: %q", rows)
	}
}

// TestPanelRootDigest: while a side hashes, its wide panel shows the
// latest pass's root digest (blksum's, cut to the column); a sample
// without one keeps it, and with another consume mode it is not shown.
func TestPanelRootDigest(t *testing.T) {
	const root = "3eb41ead61267f303e361caa2481ac0343422fcf3ce1c3ee7d25baa9a2f538f9"
	p := testPanel(0)
	if err := p.cfg.Set(model.SetConsume, string(model.ConsumeHash)); err != nil {
		t.Fatal(err)
	}
	p.SetSize(160, 0)
	if strings.Contains(strings.Join(p.rowsOf(p.data()), "\n"), "root digest") {
		t.Error("a root digest row before any pass")
	}
	s := sample("A", 1, true)
	s.RootDigest = root
	p.observe(s)
	p.observe(sample("A", 2, true))
	rows := strings.Join(p.rowsOf(p.data()), "\n")
	if !strings.Contains(rows, "consume       hash×auto") || !strings.Contains(rows, "root digest   3eb41ead61267f30") {
		t.Errorf("hashing with a pass done, the wide rows lack the consume mode or the root:\n%s", rows)
	}
	if err := p.cfg.Set(model.SetConsume, string(model.ConsumeScan)); err != nil {
		t.Fatal(err)
	}
	if rows := strings.Join(p.rowsOf(p.data()), "\n"); strings.Contains(rows, "root digest") {
		t.Errorf("scanning, yet a root digest row:\n%s", rows)
	}
}

// A real client's own calls are n/a; a narrow panel then shows the
// server's send calls, where the buffer shows, instead of "n/a".
func TestNarrowPanelExecSideShowsServerSends(t *testing.T) {
	p := panel{com: &common{styles: DefaultStyles()}}
	u := model.Unknown
	d := panelData{server: bufData{req: "2m", eff: 4 << 20}, connections: 1, inFlight: 8, requestSize: 2 << 20,
		workload: "read", consume: "scan", transport: "unix", placement: "split",
		fig: panelFigures{recv: "client", send: "server", tput: model.Figure(1 << 30), recvCalls: u,
			recvEAGAIN: u, sendCalls: 0.91, sendEAGAIN: 0.17, cliCores: u, cliPerGiB: u, srvCores: u, srvPerGiB: u,
			cliWake: u, srvWake: u, cliFaults: u, srvFaults: u, p50: u, p99: u, cpu: model.CPU{UserS: u, SysS: u, CoresBusy: u, SPerGiB: u}},
		errors: na}
	p.SetSize(40, 0)
	rows := strings.Join(p.rowsOf(d), "\n")
	if !strings.Contains(rows, "calls   0.91 per 2MiB (server send)") {
		t.Errorf("narrow rows of an exec side:\n%s", rows)
	}
	d.fig.recvCalls = 1.5
	if rows := strings.Join(p.rowsOf(d), "\n"); !strings.Contains(rows, "calls   1.50 per 2MiB (client recv)") {
		t.Errorf("narrow rows with the client's calls known:\n%s", rows)
	}
}

// TestPanelPace: the pace row words the verdict of the side's recent
// figures, as the engine's meter added them (model.Sample.Recent): the
// client's core full, or waiting; processes not held to cores get no
// verdict; the panel adds nothing itself.
func TestPanelPace(t *testing.T) {
	p := testPanel(0)
	split := model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
	smp := func(tm float64, cli, recentCli float64, pl model.Placement) model.Sample {
		fig := func(c float64) model.Figures {
			sv := model.ProcessFigures(model.Counters{UserS: 0.6 * 0.25}, 1<<30, 0.25)
			return model.Figures{Bytes: 1 << 30, Seconds: 0.25, Client: model.ProcessFigures(model.Counters{UserS: c * 0.25}, 1<<30, 0.25), Server: &sv, Placement: pl}
		}
		s := model.Sample{T: tm, Side: "A", Active: true, Figures: fig(cli)}
		r := fig(recentCli)
		s.Recent = &r
		return s
	}
	if got := p.paceWords(); got != "" {
		t.Errorf("before any sample: %q", got)
	}
	p.observe(smp(1, 0.99, 0.7, split))
	if got := p.paceWords(); got != "waiting (none full)" {
		t.Errorf("a busy sample in a half-busy 2 s: %q, want the 2 s's verdict", got)
	}
	p.observe(smp(2, 0.7, 0.99, split))
	if got := p.paceWords(); got != "client (core full)" {
		t.Errorf("recent client 0.99: %q", got)
	}
	p.observe(smp(3, 0.99, 0.99, model.Placement{Setting: model.PlaceOS, LoadCPUs: "any", ServerCPUs: "any"}))
	if got := p.paceWords(); got != "not held to cores" {
		t.Errorf("placement os: %q", got)
	}
}

// A real client's command wraps between its words, never inside a flag:
// at 80 columns "qemu-img convert -n -f raw -O raw …" showed "… raw -"
// over "O raw {uri}".
func TestExecCommandWrapsBetweenWords(t *testing.T) {
	const cmd = `qemu-img convert -n -f raw -O raw {uri} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	h := newHarness(t, Options{}, 80, 24)
	h.press("e")
	h.submit(cmd)
	h.m.Update(updateMsg{model.Update{Sample: ptr(execSample("A", 1, cmd))}})
	h.m.Update(frameMsg{})
	var words []string
	for _, line := range h.m.panels[0].content() {
		words = append(words, strings.Fields(ansi.Strip(line))...)
	}
	text := strings.Join(words, " ")
	for _, flag := range []string{"-n", "-f raw", "-O raw", "qemu-img"} {
		if !strings.Contains(text, flag) {
			t.Errorf("the panel lost %q of the command:\n%s", flag, strings.Join(h.m.panels[0].content(), "\n"))
		}
	}
}

// TestUnmeasuredLatencyHasNoUnit: a real client's side (nbdcopy as the
// load, whose requests nbdscope does not see) read "p99 n/a ms": a unit
// on a figure there is none of. Unmeasured, it is "n/a" alone.
func TestUnmeasuredLatencyHasNoUnit(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		h.feed(4, 1)
		s := sample("A", 1.25, true)
		s.LatencyP50Ms, s.LatencyP99Ms = model.Unknown, model.Unknown
		h.send(model.Update{Sample: &s})
		a := panelOf(h.view(), "A")
		if strings.Contains(a, "n/a ms") || !strings.Contains(a, "p99 n/a") {
			t.Errorf("%dx%d: A's latency:\n%s", size[0], size[1], a)
		}
	}
}

// The panel is a component: told of its side (panelState), it takes the
// configuration and works out from it what the buffer keys step, and its
// key map names that; a write workload's sender is the client.
func TestPanelTakesItsState(t *testing.T) {
	p := testPanel(0)
	sc := p.cfg
	sc.Workload = model.WorkWrite
	p, _ = p.Update(panelState{cfg: sc, focused: true})
	if got := p.keys(key.NewBinding(key.WithKeys("+"))).Buffers.Help().Desc; got != "cli sndbuf" || !p.focused {
		t.Errorf("a write side's keys step %q (focused %v), want cli sndbuf", got, p.focused)
	}
	p, _ = p.Update(panelState{cfg: sc, target: 1})
	if got := p.steppedShort(); got != "sndbuf" {
		t.Errorf("k's first target: %q, want the server's sndbuf", got)
	}
}
