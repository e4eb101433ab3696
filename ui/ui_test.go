package ui

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"nbdscope/model"
)

func TestMain(m *testing.M) {
	// Fixed output: no colours, whatever the terminal running the tests.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func ptr[T any](v T) *T { return &v }

// namedKeys are the keys keyMsg knows by name.
var namedKeys = map[string]tea.KeyMsg{
	"tab":       {Type: tea.KeyTab},
	"shift+tab": {Type: tea.KeyShiftTab},
	"enter":     {Type: tea.KeyEnter},
	"esc":       {Type: tea.KeyEsc},
	" ":         {Type: tea.KeySpace, Runes: []rune{' '}},
	"space":     {Type: tea.KeySpace, Runes: []rune{' '}},
	"ctrl+c":    {Type: tea.KeyCtrlC},
	"down":      {Type: tea.KeyDown},
	"up":        {Type: tea.KeyUp},
}

// keyMsg turns "tab", "enter", "+", "ctrl+c", … into a key message.
func keyMsg(s string) tea.KeyMsg {
	if k, ok := namedKeys[s]; ok {
		return k
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

type harness struct {
	t *testing.T
	m *Model
	f *fakeCtrl
}

func newHarness(t *testing.T, opts Options, w, h int) *harness {
	t.Helper()
	f := newFake()
	if opts.PresetName == "" {
		opts.PresetName = "linux-gap"
	}
	m := newModel(f, opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return &harness{t: t, m: m, f: f}
}

// press sends keys; the last key's command is returned (not run).
func (h *harness) press(keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = h.m.Update(keyMsg(k))
	}
	return cmd
}

// typeText types text into an open prompt.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// openPicker presses a picker's key and delivers what its command
// loaded: the picker then lists the entries.
func (h *harness) openPicker(key string) {
	h.t.Helper()
	cmd := h.press(key)
	if cmd == nil {
		h.t.Fatalf("%s started no command", key)
	}
	h.m.Update(cmd())
}

// submit types text into the open prompt, presses enter and settles the
// controller calls that started.
func (h *harness) submit(text string) {
	h.t.Helper()
	h.typeText(text)
	h.press("enter")
	h.settle()
}

// submitLeaves submits text and checks that it leaves the explorer in the
// state want; why says what went wrong if it does not.
func (h *harness) submitLeaves(text string, want state, why string) {
	h.t.Helper()
	h.submit(text)
	if h.m.state != want {
		h.t.Fatal(why)
	}
}

// openPrompt presses keys, the last of which opens a prompt, and checks
// that it is open and shows want.
func (h *harness) openPrompt(want string, keys ...string) {
	h.t.Helper()
	h.press(keys...)
	if h.m.state != stInput {
		h.t.Fatalf("%s did not open the prompt", keys[len(keys)-1])
	}
	h.wantView(want)
}

// settle runs the queued controller calls one by one, as the program
// would run their commands, and feeds back their results.
func (h *harness) settle() {
	h.t.Helper()
	for i := 0; h.m.opBusy; i++ {
		if i > 100 {
			h.t.Fatal("controller calls do not settle")
		}
		o := h.m.ops[0]
		err := o.run(h.m.ctrl)
		h.m.Update(opDoneMsg{id: o.id, err: err, cfg: h.m.ctrl.Config()})
	}
}

// send delivers an engine update and draws a frame.
func (h *harness) send(u model.Update) {
	h.m.Update(updateMsg{u})
	h.m.Update(frameMsg{})
}

// feed sends n samples of both sides, 250 ms apart, ending at t.
func (h *harness) feed(n int, t float64) {
	for i := n - 1; i >= 0; i-- {
		tt := t - float64(i)*0.25
		h.m.Update(updateMsg{model.Update{Sample: ptr(sample("A", tt, true))}})
		h.m.Update(updateMsg{model.Update{Sample: ptr(sample("B", tt, true))}})
	}
	h.m.Update(frameMsg{})
}

func (h *harness) view() string { return h.m.View() }

func (h *harness) wantView(subs ...string) {
	h.t.Helper()
	v := h.view()
	for _, s := range subs {
		if !strings.Contains(v, s) {
			h.t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
}

func (h *harness) wantApplied(want ...model.Change) {
	h.t.Helper()
	got := h.f.appliedCopy()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("Apply calls:\n got %v\nwant %v", got, want)
	}
}

// ch is a change as the explorer sends it, parsed from its text form.
func ch(side int, setting, value string) model.Change {
	c, err := model.NewChange(side, setting, value)
	if err != nil {
		panic(err)
	}
	return c
}

func TestStepBuf(t *testing.T) {
	size := func(n int) model.Buf { return model.Buf{Kind: model.BufSize, Bytes: n} }
	cases := []struct {
		b    model.Buf
		dir  int
		want string
		ok   bool
	}{
		// At default, from its effective size (208k here).
		{model.Buf{}, 1, "256k", true},
		{model.Buf{}, -1, "128k", true},
		{size(4 << 10), -1, "", false},
		{size(2 << 20), 1, "4m", true},
		{size(2 << 20), -1, "1m", true},
		{size(8 << 20), 1, "", false},
		{size(100000), 1, "128k", true},
		{size(100000), -1, "64k", true},
		{size(1024), -1, "", false},
		{model.Buf{Kind: model.BufMacOS}, 1, "16k", true},
		{model.Buf{Kind: model.BufMacOS}, -1, "4k", true},
	}
	for _, c := range cases {
		got, ok := stepBuf(c.b, c.dir, 212992, 0)
		if got != c.want || ok != c.ok {
			t.Errorf("stepBuf(%v, %d) = %q, %v; want %q, %v", c.b, c.dir, got, ok, c.want, c.ok)
		}
	}
}

func TestKeyPickSide(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	if h.m.focus != 0 {
		t.Fatal("A is not focused at start")
	}
	steps := []struct {
		key  string
		want int
	}{{"tab", 1}, {"tab", 0}, {"2", 1}, {"1", 0}, {"shift+tab", 1}, {"2", 1}}
	for _, s := range steps {
		h.press(s.key)
		if h.m.focus != s.want {
			t.Errorf("after %q focus = %d, want %d", s.key, h.m.focus, s.want)
		}
	}
	// The focused panel has the thick border (visible without colour).
	h.wantView("┏━ ▸ B")
}

// + and - step from the size in effect: A starts at the OS default,
// 208k effective here, so + goes to 256k and - to 128k (issue 21, item
// 10: + at default used to go to 4k, below the default).
func TestKeySndbufLadder(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("+")
	// Shown at once, before the engine confirmed it.
	if got := h.m.cfg.Sides[0].SndBuf.String(); got != "256k" {
		t.Fatalf("+ at default (208k effective): optimistic sndbuf = %s, want 256k", got)
	}
	h.wantView("256k → ", "applying…")
	h.settle()
	h.press("+")
	h.settle()
	h.press("-")
	h.settle()
	h.press("-")
	h.settle()
	h.wantApplied(ch(0, "sndbuf", "256k"), ch(0, "sndbuf", "512k"), ch(0, "sndbuf", "256k"), ch(0, "sndbuf", "128k"))

	// - at default goes below the default's 208k, to 128k.
	h = newHarness(t, Options{}, 80, 24)
	h.press("-")
	h.settle()
	h.wantApplied(ch(0, "sndbuf", "128k"))
	// Down to the bottom of the ladder, where - says so.
	for range 8 {
		h.press("-")
		h.settle()
	}
	if got := h.f.Config().Sides[0].SndBuf.String(); got != "4k" {
		t.Errorf("A sndbuf after - at the bottom = %s, want 4k", got)
	}
	h.wantView("ladder starts at 4k")

	h.press("2", "+")
	h.settle()
	if got := h.f.Config().Sides[1].SndBuf.String(); got != "4m" {
		t.Errorf("B sndbuf = %s, want 4m", got)
	}
}

// A default whose effective size the OS did not report has nothing to
// step from: + and - say so and change nothing.
func TestKeySndbufUnknownDefault(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.m.com.facts.UnixSndbufDefault = 0
	h.press("+")
	h.settle()
	h.press("-")
	h.settle()
	h.wantApplied()
	h.wantView("nothing to step from")
}

// The buffer keys step a TCP side from TCP's default, a receive buffer
// from TCP's receive default.
func TestKeySndbufDefaultByTransportAndSocket(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.m.com.facts.TCPSndbufDefault = 16384
	h.m.com.facts.TCPRcvbufDefault = 65536
	h.press("t")
	h.settle()
	h.press("+")
	h.settle()
	h.press("k", "k", "k", "-") // client rcvbuf, from 64k
	h.settle()
	h.wantApplied(ch(0, "transport", "tcp"), ch(0, "sndbuf", "32k"), ch(0, "client-rcvbuf", "32k"))
}

func TestKeySndbufCoalesces(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("+", "+", "+") // 256k runs, 512k is queued and replaced by 1m
	if got := h.m.cfg.Sides[0].SndBuf.String(); got != "1m" {
		t.Fatalf("optimistic sndbuf = %s, want 1m", got)
	}
	h.settle()
	h.wantApplied(ch(0, "sndbuf", "256k"), ch(0, "sndbuf", "1m"))
	if got := h.m.cfg.Sides[0].SndBuf.String(); got != "1m" {
		t.Errorf("sndbuf after settle = %s, want 1m", got)
	}
}

func TestApplyErrorReverts(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.f.applyErr = errors.New("child did not answer")
	h.press("+")
	h.settle()
	if got := h.m.cfg.Sides[0].SndBuf.String(); got != "default" {
		t.Errorf("sndbuf after failed apply = %s, want default", got)
	}
	h.wantView("child did not answer")
}

func TestKeyExactSndbuf(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.openPrompt("B sndbuf = ", "2", "=")
	h.submitLeaves("lots", stInput, "invalid input closed the prompt")
	h.wantView(`sndbuf "lots": want`) // the error from parsing it, before any engine call
	for range "lots" {
		h.m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	h.submitLeaves("64k", stNormal, "valid input did not close the prompt")
	h.wantApplied(ch(1, "sndbuf", "64k"))
	h.wantView("64k → ")

	// Esc cancels without a call; "q" is text while typing.
	h.press("=")
	h.typeText("q1m")
	h.press("esc")
	h.settle()
	if h.m.state != stNormal || h.m.quitting {
		t.Fatal("esc did not cancel, or q quit")
	}
	if n := len(h.f.appliedCopy()); n != 1 {
		t.Errorf("esc applied something: %d calls", n)
	}
}

func TestKeyConnectionsRequestInFlight(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("C")
	h.settle()
	h.press("c")
	h.settle()
	h.press("c") // at 1: no call
	h.press("R")
	h.settle()
	h.press("r")
	h.settle()
	h.press("D")
	h.settle()
	h.press("d")
	h.settle()
	h.wantApplied(
		ch(0, "connections", "2"), ch(0, "connections", "1"),
		ch(0, "request-size", "4m"), ch(0, "request-size", "2m"),
		ch(0, "in-flight", "16"), ch(0, "in-flight", "8"),
	)
	// Limits.
	h.f.cfg.Sides[0].RequestSize = 512
	h.f.cfg.Sides[0].InFlight = 256
	h.m.base.Cfg = h.f.Config()
	h.m.recompute()
	h.press("r")
	h.press("D")
	if n := len(h.f.appliedCopy()); n != 6 {
		t.Errorf("limits exceeded: %d calls", n)
	}
	h.wantView("limit")
}

func TestKeyWorkloadTransport(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	for range model.Workloads {
		h.press("w")
		h.settle()
	}
	h.press("t")
	h.settle()
	h.press("t")
	h.settle()
	h.wantApplied(
		ch(0, "workload", "write"), ch(0, "workload", "randread"), ch(0, "workload", "randwrite"),
		ch(0, "workload", "mixed"), ch(0, "workload", "read"),
		ch(0, "transport", "tcp"), ch(0, "transport", "unix"),
	)
}

func TestKeyPlacement(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.press("2")
	for range model.Placements {
		h.press("o")
		h.settle()
	}
	h.wantApplied(ch(1, "placement", "shared"), ch(1, "placement", "os"), ch(1, "placement", "split"))
	h.wantView("placement     split", "cores       n/a") // no sample yet
	s := sample("B", 1, true)
	s.Placement = model.Placement{Setting: model.PlaceShared, LoadCPUs: "2", ServerCPUs: "2"}
	h.send(model.Update{Sample: &s})
	h.wantView("load 2 · server 2")
	h.press("?")
	h.wantView("cores: split/shared/os")
	h.press("tab")
	h.wantView("cross-core wake-up")
}

func TestKeyModeAndCoresHint(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.press("m")
	if h.m.cfg.Mode != model.ModeConcurrent {
		t.Fatal("mode not toggled at once")
	}
	h.settle()
	if fmt.Sprint(h.f.modes) != "[concurrent]" {
		t.Errorf("SetMode calls %v", h.f.modes)
	}
	h.wantView("mode concurrent", "2 cores", "alternate (m) is fairer")
	h.press("m")
	h.settle()
	if !strings.Contains(h.view(), "mode alternate") || strings.Contains(h.view(), "is fairer") {
		t.Errorf("alternate mode view:\n%s", h.view())
	}
}

func TestKeyPause(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press(" ")
	h.wantView("‖ paused")
	h.settle()
	h.press(" ")
	h.settle()
	if fmt.Sprint(h.f.pauses) != "[{0 true} {0 false}]" {
		t.Errorf("SetPaused calls %v", h.f.pauses)
	}
	if h.m.paused[0] {
		t.Error("A still paused")
	}
}

func TestKeyGap(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("2", "-") // B from 2m to 1m
	h.settle()
	h.press("g")
	h.settle()
	h.wantApplied(ch(1, "sndbuf", "1m"), ch(0, "sndbuf", "macos"), ch(1, "sndbuf", "2m"))
	h.wantView("macos → ", "gap: A at macOS's 8k, B at 2m")
	if h.f.facts.OS != "darwin" { // says this is not a Mac, with the series' 12.6x
		h.wantView("not XNU")
	}
	// Set already: sent all the same, as a script's would be, so the
	// engine marks both events no-ops; the message warns.
	h.press("g")
	h.settle()
	h.wantApplied(ch(1, "sndbuf", "1m"), ch(0, "sndbuf", "macos"), ch(1, "sndbuf", "2m"), ch(0, "sndbuf", "macos"), ch(1, "sndbuf", "2m"))
	h.wantView("already")
	if h.m.msg.kind != msgWarn {
		t.Errorf("g on the gap in force: a message of kind %v, want a warning", h.m.msg.kind)
	}
}

// TestNoOpChange: a value the side has already (= 2m on B at 2m) warns, in
// the words a scripted one's warning has, and is sent to the engine as a
// scripted one is, so that its event is there, marked a no-op, in the
// events and the saved run: it left none. The event the engine sends
// back says so in the events list.
func TestNoOpChange(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("2", "=")
	h.typeText("2m")
	h.press("enter")
	if h.m.state != stNormal {
		t.Fatalf("= 2m on a side at 2m: state %v, want the prompt closed", h.m.state)
	}
	h.wantView("▲ side B: sndbuf is 2m already")
	if h.m.msg.kind != msgWarn {
		t.Errorf("the message is of kind %v, want a warning", h.m.msg.kind)
	}
	h.settle()
	h.wantApplied(ch(1, "sndbuf", "2m"))
	if h.m.msg.kind != msgWarn {
		t.Errorf("after the engine call the message is of kind %v, want the warning kept", h.m.msg.kind)
	}
	h.send(model.Update{Event: &model.Event{T: 1, Side: "B", Setting: model.SetSndBuf, From: "2m", To: "2m", NoOp: true}})
	if evs := h.m.charts.events; len(evs) == 0 || !evs[len(evs)-1].NoOp {
		t.Errorf("the no-op event is not in the events: %+v", evs)
	}
}

// TestKeysInOneMessage: keys that arrive together ("2++", as tmux
// send-keys or a slow link deliver them) are each a key; in a text field
// they are text.
func TestKeysInOneMessage(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2++")})
	h.settle()
	if h.m.focus != 1 || h.m.cfg.Sides[1].SndBuf.String() != "8m" {
		t.Errorf("after \"2++\": focus %d, B sndbuf %s; want B at 8m", h.m.focus, h.m.cfg.Sides[1].SndBuf)
	}
	h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("1=64k")})
	if h.m.state != stInput || h.m.input.Value() != "64k" || h.m.focus != 0 {
		t.Errorf("after \"1=64k\": state %v, input %q, focus %d", h.m.state, h.m.input.Value(), h.m.focus)
	}
}

func TestKeyClearLatencyCharts(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.feed(40, 10)
	if len(h.m.charts.hist[0].pts) == 0 {
		t.Fatal("no points")
	}
	h.press("x")
	if len(h.m.charts.hist[0].pts)+len(h.m.charts.hist[1].pts) != 0 {
		t.Error("x did not clear the charts")
	}
	h.press("l")
	if len(h.m.charts.defs()) != 6 { // throughput, calls, CPU, latency, wake-ups, fill
		t.Error("l did not add the latency chart")
	}
	// 80x24 shows two charts at a time: v pages.
	if !h.m.charts.paging() {
		t.Fatal("no paging at 80x24")
	}
	// l starts the pages at the latency chart (3), out of sight on the
	// first; v pages on from there and round to throughput.
	h.press("v")
	if h.m.charts.page != 4 {
		t.Errorf("page = %d", h.m.charts.page)
	}
	h.press("v", "v")
	h.wantView("throughput (")
	h.press("l")
	if len(h.m.charts.defs()) != 5 {
		t.Error("l did not remove the latency chart")
	}
	h.m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.press("v")
	h.wantView("every chart is shown")
}

func TestLatencyChartAt160(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.feed(40, 10)
	h.press("l")
	h.wantView("latency (ms)", "p50", "p99", "throughput (", "CPU (cores busy")
}

func TestKeyHelp(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.press("?")
	h.wantView("keys", "page 1 of 2", "tab: figures", "connections")
	h.press("tab")
	h.wantView("figures", "page 2 of 2", "calls/2MiB")
	h.press("esc")
	if h.m.state != stNormal {
		t.Error("esc did not close help")
	}
	h.press("?", "?")
	if h.m.state != stNormal {
		t.Error("? did not close help")
	}
	// The help's footer and the README say q quits from the help too.
	h.press("?")
	if cmd := h.press("q"); cmd == nil || !h.m.quitting {
		t.Error("q in the help closed it instead of quitting, as its footer says")
	}
}

// wantUnavailable presses a picker's key on a model without the hooks
// that list its entries: no command starts, and the view says why.
func (h *harness) wantUnavailable(key, why string) {
	h.t.Helper()
	if cmd := h.press(key); cmd != nil {
		h.t.Errorf("%s without hooks returned a command", key)
	}
	h.wantView(why)
}

func TestKeyPresetsUnavailable(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.wantUnavailable("p", "presets not available")
	h.press("s")
	h.wantView("presets not available")
	if h.m.state != stNormal {
		t.Error("s opened a prompt without a hook")
	}
}

func testPresets() []PresetItem {
	mac := model.DefaultConfig()
	mac.Mode = model.ModeAlternate
	mac.Sides[0].SndBuf = model.Buf{Kind: model.BufMacOS}
	lin := model.DefaultConfig()
	lin.Mode = model.ModeAlternate
	return []PresetItem{
		{Name: "linux-gap", Description: "OS default vs 2 MiB", BuiltIn: true, Config: lin},
		{Name: "macos-gap", Description: "macOS 8 KiB vs 2 MiB", BuiltIn: true, Config: mac},
	}
}

func TestKeyPresetPicker(t *testing.T) {
	h := newHarness(t, Options{LoadPresets: func() ([]PresetItem, error) { return testPresets(), nil }}, 100, 30)
	cmd := h.press("p")
	if h.m.state != stPicker || cmd == nil {
		t.Fatal("p did not open the picker")
	}
	h.wantView("loading presets")
	h.m.Update(cmd())
	h.wantView("macos-gap", "linux-gap (built-in)")
	h.press("down", "enter")
	h.settle()
	h.wantApplied(ch(0, "sndbuf", "macos"))
	h.wantView("preset macos-gap", "macos → ")
	if h.m.preset != "macos-gap" {
		t.Errorf("preset = %q", h.m.preset)
	}
	// Esc closes without applying.
	h.openPicker("p")
	h.press("esc")
	if h.m.state != stNormal {
		t.Error("esc did not close the picker")
	}
}

func TestApplyPresetHook(t *testing.T) {
	var got string
	h := newHarness(t, Options{
		LoadPresets: func() ([]PresetItem, error) { return testPresets(), nil },
		ApplyPreset: func(p PresetItem) error { got = p.Name; return nil },
	}, 100, 30)
	h.openPicker("p")
	h.press("enter")
	h.settle()
	if got != "linux-gap" {
		t.Errorf("ApplyPreset got %q", got)
	}
	if len(h.f.appliedCopy()) != 0 {
		t.Error("the hook was bypassed")
	}
}

func TestPresetLoadError(t *testing.T) {
	h := newHarness(t, Options{LoadPresets: func() ([]PresetItem, error) { return nil, errors.New("bad file x.json") }}, 80, 24)
	h.openPicker("p")
	if h.m.state != stNormal {
		t.Error("picker stayed open")
	}
	h.wantView("bad file x.json")
	// Presets that loaded are shown with the error.
	h2 := newHarness(t, Options{LoadPresets: func() ([]PresetItem, error) {
		return testPresets(), errors.New("bad file y.json")
	}}, 100, 30)
	h2.openPicker("p")
	if h2.m.state != stPicker {
		t.Fatal("picker closed although presets loaded")
	}
	h2.wantView("macos-gap", "bad file y.json")
}

func TestKeySavePreset(t *testing.T) {
	saved := map[string]model.Config{"mine": {}}
	var overwritten string
	from := map[string]string{} // the preset each save came from: what a run saved with it names
	h := newHarness(t, Options{
		PresetName: "linux-gap",
		SavePreset: func(name string, cfg model.Config, was string) error {
			if _, ok := saved[name]; ok {
				return fmt.Errorf("preset %s: %w", name, ErrPresetExists)
			}
			saved[name], from[name] = cfg, was
			return nil
		},
		OverwritePreset: func(name string, cfg model.Config, was string) error {
			overwritten = name
			saved[name], from[name] = cfg, was
			return nil
		},
	}, 80, 24)
	h.press("s")
	h.wantView("save preset as:")
	h.submit("fresh")
	if _, ok := saved["fresh"]; !ok {
		t.Fatal("not saved")
	}
	h.wantView("saved preset fresh", "preset fresh")

	// An existing name asks first; n keeps it.
	h.press("s")
	h.submitLeaves("mine", stConfirm, "no confirmation for an existing name")
	h.wantView(`"mine" exists`)
	h.press("n")
	if overwritten != "" {
		t.Fatal("n overwrote")
	}
	// y overwrites.
	h.press("s")
	h.submit("mine")
	h.press("y")
	h.settle()
	if overwritten != "mine" {
		t.Error("y did not overwrite")
	}
	if saved["mine"].Sides[1].SndBuf.String() != "2m" {
		t.Error("the configuration in effect was not saved")
	}
	if from["fresh"] != "linux-gap" || from["mine"] != "fresh" {
		t.Errorf("saved from %q, want fresh from linux-gap (the header's) and mine from fresh (the last saved)", from)
	}
}

func TestSaveExistsWithoutOverwrite(t *testing.T) {
	h := newHarness(t, Options{SavePreset: func(string, model.Config, string) error { return os.ErrExist }}, 80, 24)
	h.press("s")
	h.submit("x")
	if h.m.state == stConfirm {
		t.Error("asked to overwrite without a hook")
	}
	// The prompt stays, cleared, with the reason: another name is typed.
	if h.m.state != stInput || h.m.input.Value() != "" {
		t.Errorf("prompt state %v, text %q: want it open and empty", h.m.state, h.m.input.Value())
	}
	h.wantView(`"x" exists; type another name`)
}

func TestKeyRestart(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.press("!")
	h.settle()
	if len(h.f.restarts) != 0 {
		t.Fatal("restart without a crash")
	}
	h.wantView("no side has crashed")
	h.send(model.Update{Crash: &model.Crash{T: 3, Side: "B", Role: "server", Status: "exit status 2",
		Stderr: []string{"goroutine 1 [running]:", "panic: boom", ""}}})
	h.wantView("✗ B server crashed (exit status 2)", "panic: boom", "! restart B", "✗ crashed")
	h.press("!")
	h.settle()
	if fmt.Sprint(h.f.restarts) != "[1]" {
		t.Errorf("Restart calls %v", h.f.restarts)
	}
	if strings.Contains(h.view(), "crashed (") {
		t.Error("banner stays after restart")
	}
}

func TestKeyQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		h := newHarness(t, Options{}, 80, 24)
		cmd := h.press(k)
		if cmd == nil || !h.m.quitting {
			t.Fatalf("%s: not quitting", k)
		}
		h.wantView("stopping")
		msg := cmd()
		if h.f.stopCount() != 1 {
			t.Fatalf("%s: Stop not called", k)
		}
		_, cmd = h.m.Update(msg)
		if cmd == nil {
			t.Fatalf("%s: no quit after stop", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s: %T, want tea.QuitMsg", k, cmd())
		}
	}
	// A second quit key leaves at once.
	h := newHarness(t, Options{}, 80, 24)
	h.press("q")
	cmd := h.press("q")
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("second q did not quit at once")
	}
}

func TestSampleFigures(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.feed(8, 2)
	h.wantView("1.80 GiB/s", "10.2", "0.92 cores", "0.61 s/GiB", "p50 9.80 ms", "p99 14.2 ms",
		"default → 208k eff", "2m → 416k eff clamped", "4.40 GiB/s", "1.04", "1.50 cores · 0.99 s/GiB")
	if len(h.m.charts.hist[0].pts) != 8 {
		t.Errorf("points = %d", len(h.m.charts.hist[0].pts))
	}
}

func TestUnknownFiguresAreNA(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	s := model.Sample{T: 1, Side: "A", Active: true, Figures: model.Figures{Seconds: 1,
		ThroughputBps: model.Unknown, LatencyP50Ms: model.Unknown, LatencyP99Ms: model.Unknown,
		Client: model.Process{RecvCallsPer2MiB: model.Unknown, EAGAINPer2MiB: model.Unknown,
			SendCallsPer2MiB: model.Unknown, RecvEAGAINPer2MiB: model.Unknown, SendEAGAINPer2MiB: model.Unknown,
			VolCSPer2MiB: model.Unknown, InvolCSPer2MiB: model.Unknown, FaultsPer2MiB: model.Unknown,
			CoresBusy: model.Unknown, CPUSPerGiB: model.Unknown}}}
	h.send(model.Update{Sample: &s}) // Server nil: an external target
	v := h.view()
	var panelLines []string
	for _, l := range columnOf(v, 0, 80) {
		if strings.HasPrefix(l, "┃") {
			panelLines = append(panelLines, l)
		}
	}
	left := strings.Join(panelLines, "\n")
	for _, want := range []string{"throughput  n/a", "recv calls  n/a", "cpu server  n/a cores · n/a s/GiB", "p50 n/a · p99 n/a"} {
		if !strings.Contains(left, want) {
			t.Errorf("panel lacks %q:\n%s", want, left)
		}
	}
	if strings.Contains(left, "0.00") {
		t.Errorf("an unknown figure shows as 0:\n%s", left)
	}
	// Unknown points leave gaps in the charts, not zeros.
	for _, v := range h.m.charts.hist[0].pts[0].v {
		if !math.IsNaN(v) {
			t.Errorf("unknown figure charted as %v", v)
		}
	}
	// Before any sample every figure is n/a.
	h2 := newHarness(t, Options{}, 80, 24)
	h2.wantView("rate    n/a", "calls   n/a", "… starting")
}

// columnOf cuts cells [from, to) of every line.
func columnOf(v string, from, to int) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		r := []rune(l)
		out = append(out, string(r[min(from, len(r)):min(to, len(r))]))
	}
	return out
}

// An off-turn side says it waits: in full where the title has room, in
// short beside its consume mode in a narrow one.
func TestInactiveSample(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.send(model.Update{Sample: ptr(sample("B", 1, false))})
	h.wantView("B ○ waiting · consume scan")
	if len(h.m.charts.hist[1].pts) != 0 {
		t.Error("an off-turn sample was charted")
	}
	h = newHarness(t, Options{}, 160, 48)
	h.send(model.Update{Sample: ptr(sample("B", 1, false))})
	h.wantView("B ○ waiting its turn")
}

// A side whose first turn came but whose load still warms its buffers
// says so, rather than that it waits for its turn.
func TestWarmingSample(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	s := sample("A", 1, false)
	s.Warming = true
	h.send(model.Update{Sample: &s})
	h.wantView("A ◌ warming · consume scan")
	h = newHarness(t, Options{}, 160, 48)
	h.send(model.Update{Sample: &s})
	h.wantView("◌ warming its buffers")
}

// A side whose load runs but completes nothing for 2 s says so in its
// title, and stops saying so once bytes move again (issue 11.1).
func TestNoProgressShown(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.send(model.Update{Sample: ptr(sample("A", 1, true))})
	stuck := func(tt float64) {
		s := sample("A", tt, true)
		s.Bytes, s.ThroughputBps = 0, 0
		h.send(model.Update{Sample: &s})
	}
	for tt := 1.25; tt <= 2.5; tt += 0.25 {
		stuck(tt)
	}
	if strings.Contains(h.view(), "no progress") {
		t.Errorf("no progress shown after 1.5 s:\n%s", h.view())
	}
	for tt := 2.75; tt <= 3.5; tt += 0.25 {
		stuck(tt)
	}
	h.wantView("⚠ no progress for 2s")
	h.send(model.Update{Sample: ptr(sample("A", 3.75, true))})
	if strings.Contains(h.view(), "no progress") {
		t.Errorf("no progress still shown after bytes moved:\n%s", h.view())
	}
	// Off-turn is not stuck.
	for tt := 4.0; tt <= 7; tt += 0.25 {
		h.send(model.Update{Sample: ptr(sample("A", tt, false))})
	}
	if strings.Contains(h.view(), "no progress") {
		t.Errorf("an off-turn side shown as stuck:\n%s", h.view())
	}
}

func TestEventMarker(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.feed(80, 20)
	h.send(model.Update{Event: &model.Event{T: 10, Side: "B", Setting: "sndbuf", From: "2m", To: "64k"}})
	h.wantView("▲0:10 B sndbuf 2m→64k", "┊")
	// The time axis carries the side's letter at the change.
	var axis string
	for _, l := range strings.Split(h.view(), "\n") {
		if strings.Contains(l, "└") {
			axis = l
		}
	}
	if !strings.Contains(axis, "B") {
		t.Errorf("no B marker on the axis: %q", axis)
	}
	// A scripted change brings the panel up to date.
	if got := h.m.cfg.Sides[1].SndBuf.String(); got != "64k" {
		t.Errorf("B sndbuf after event = %s", got)
	}
	h.wantView("preset linux-gap*") // modified
	// Mode and pause events.
	h.send(model.Update{Event: &model.Event{T: 11, Setting: "mode", From: "alternate", To: "concurrent"}})
	h.send(model.Update{Event: &model.Event{T: 12, Side: "A", Setting: "paused", From: "false", To: "true"}})
	if h.m.cfg.Mode != model.ModeConcurrent || !h.m.paused[0] {
		t.Error("mode/pause events not applied")
	}
	h.wantView("mode concurrent", "A paused")
}

func TestEventMessageWhenNoStrip(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.send(model.Update{Warning: &model.Warning{T: 1, Side: "B", Kind: model.WarnClamp, Text: "clamped", Fix: "sudo sysctl -w net.core.wmem_max=2097152"}})
	h.send(model.Update{Event: &model.Event{T: 5, Side: "A", Setting: "connections", From: "1", To: "2"}})
	h.wantView("A connections 1→2")
}

func TestClampWarning(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	h.send(model.Update{Warning: &model.Warning{T: 2, Side: "B", Kind: model.WarnClamp,
		Text: "B sndbuf: requested 2m, effective 416k — the kernel limit net.core.wmem_max is lower",
		Fix:  "sudo sysctl -w net.core.wmem_max=2097152  (persist: net.core.wmem_max = 2097152 in /etc/sysctl.d/90-nbdscope.conf)"}})
	h.wantView("▲ B sndbuf: requested 2m, effective 416k", "fix: sudo sysctl -w net.core.wmem_max=2097152")
	// The warning sits in B's panel (the right half).
	right := strings.Join(columnOf(h.view(), 80, 160), "\n")
	if !strings.Contains(right, "fix: sudo sysctl") {
		t.Errorf("warning not in B's panel:\n%s", right)
	}
	// It stays while samples show the clamp, as the engine judged it
	// (2m gives 416k where the kernel doubles requests).
	s := sample("B", 3, true)
	h.send(model.Update{Sample: &s})
	h.wantView("fix: sudo sysctl", "2m → 416k eff clamped")
	// It goes when a later sample is no longer clamped.
	s = sample("B", 4, true)
	s.SndBuf.Clamped = false
	s.SndBuf.ServerRequested, s.SndBuf.ServerEffective = "128k", 262144
	h.send(model.Update{Sample: &s})
	if strings.Contains(h.view(), "fix: sudo") {
		t.Error("clamp warning stays after the clamp is gone")
	}
	// A pair-level warning goes to the status line.
	h.send(model.Update{Warning: &model.Warning{T: 4, Kind: "other", Text: "2 cores: alternate is fairer", Fix: "press m"}})
	h.wantView("▲ 2 cores: alternate is fairer — press m")
	// The cores warning in words that fit 80 columns.
	cores := model.Warn(model.WholePair, model.FewCores{Cores: 2})
	h.send(model.Update{Warning: &cores})
	h.wantView("▲ 2 cores: in concurrent mode the sides compete for CPU — m for alternate")
	// Another side warning shows in the panel too.
	h.send(model.Update{Warning: &model.Warning{T: 5, Side: "A", Kind: "errors", Text: "A: 3 requests failed"}})
	h.wantView("▲ A: 3 requests failed")
}

func TestDone(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.send(model.Update{Done: &model.Done{}})
	h.wantView("finished", "the run ended")
	h.m.Update(updatesClosedMsg{})
	if cmd := h.m.waitUpdate(); cmd != nil {
		t.Error("reading updates after the channel closed")
	}
	h2 := newHarness(t, Options{}, 80, 24)
	h2.send(model.Update{Done: &model.Done{Err: errors.New("server A exited")}})
	h2.wantView("the run failed: server A exited")
	if h2.m.doneErr == nil {
		t.Error("done error lost")
	}
	// Closed without Done.
	h3 := newHarness(t, Options{}, 80, 24)
	h3.m.Update(updatesClosedMsg{})
	h3.wantView("finished")
}

func TestUpdatePump(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.f.push(model.Update{Sample: ptr(sample("A", 1, true))})
	msg := h.m.waitUpdate()()
	um, ok := msg.(updateMsg)
	if !ok || um.u.Sample == nil {
		t.Fatalf("pump delivered %T", msg)
	}
	_, cmd := h.m.Update(msg)
	if cmd == nil {
		t.Fatal("pump not re-armed")
	}
	close(h.f.updates)
	if _, ok := cmd().(updatesClosedMsg); !ok {
		t.Error("closed channel not reported")
	}
}

func TestSamplesRedrawOnFrameTick(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	before := h.view()
	h.m.Update(updateMsg{model.Update{Sample: ptr(sample("A", 1, true))}})
	if h.view() != before {
		t.Error("a sample redrew before the frame tick")
	}
	_, cmd := h.m.Update(frameMsg{})
	if h.view() == before {
		t.Error("the frame tick did not redraw")
	}
	if cmd == nil {
		t.Error("frame tick not re-armed")
	}
	// Elapsed time comes from the controller.
	h.f.elapsed += 5e9
	h.m.Update(frameMsg{})
	h.wantView("0:47")
}

func TestSizesNeverPanic(t *testing.T) {
	sizes := [][2]int{{0, 0}, {1, 1}, {0, 24}, {80, 0}, {20, 10}, {39, 11}, {40, 12}, {59, 20}, {60, 16}, {80, 24}, {100, 30}, {160, 48}, {300, 100}}
	for _, sz := range sizes {
		h := newHarness(t, Options{LoadPresets: func() ([]PresetItem, error) { return testPresets(), nil }}, sz[0], sz[1])
		h.feed(20, 5)
		h.send(model.Update{Crash: &model.Crash{T: 1, Side: "A", Role: "load", Status: "signal: killed"}})
		for _, keys := range [][]string{{"?"}, {"esc", "="}, {"esc", "l"}, {"v"}, {"p"}} {
			cmd := h.press(keys...)
			if keys[0] == "p" && cmd != nil {
				h.m.Update(cmd())
			}
			checkFits(t, h.view(), sz[0], sz[1])
		}
	}
}

func TestOddMessagesNeverPanic(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	nan := math.NaN()
	odd := []model.Update{
		{}, // no field set
		{Sample: &model.Sample{Side: "Z", T: 1, Active: true}},
		{Sample: &model.Sample{Side: "", T: 1}},
		{Sample: &model.Sample{Side: "A", T: nan, Active: true}},
		{Sample: &model.Sample{Side: "a", T: -5, Active: true, Figures: model.Figures{Seconds: -1, ThroughputBps: -1}}},
		{Sample: &model.Sample{Side: "B", T: 1e12, Active: true, Figures: model.Figures{Seconds: 1e12, ThroughputBps: model.Figure(math.Inf(1))}}},
		{Event: &model.Event{T: nan, Side: "Q", Setting: "bogus", From: "x", To: "y"}},
		{Event: &model.Event{T: 1, Side: "A", Setting: "sndbuf", From: "x", To: "not a size"}},
		{Crash: &model.Crash{Side: "Z", Role: "load", Status: "killed"}},
		{Crash: &model.Crash{Side: "A"}},
		{Warning: &model.Warning{Side: "Z", Kind: model.WarnClamp}},
		{Warning: &model.Warning{Side: "A", Kind: model.WarnClamp, Text: strings.Repeat("x", 500), Fix: strings.Repeat("y ", 300)}},
		{Done: &model.Done{}},
	}
	for _, u := range odd {
		h.send(u)
		checkFits(t, h.view(), 80, 24)
	}
	h.m.Update(struct{}{}) // an unknown message
	h.m.Update(tea.WindowSizeMsg{Width: -3, Height: -1})
	if h.view() != "" {
		t.Error("negative size drew something")
	}
}

// The panel shows each side's consume mode, narrow (in the title) and
// wide (a row of its own); `?` explains every mode in one line.
func TestConsumeShownAndExplained(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		gap := " "
		if size[0] == 160 {
			gap = "       " // the wide panel's label column
		}
		f := newFake()
		f.cfg.Sides[1].Consume = model.ConsumeHash
		f.cfg.Sides[1].HashThreads = 3
		m := newModel(f, Options{PresetName: "blksum"})
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		h := &harness{t: t, m: m, f: f}
		h.wantView("consume"+gap+"scan", "consume"+gap+"hash×3")
	}
	h := newHarness(t, Options{}, 160, 60)
	h.press("?", "tab")
	for _, mode := range model.ConsumeModes {
		h.wantView(string(mode.Name), mode.Help[:30])
	}
}

// A side whose samples were measured under writes shows the sender's (the
// client's) send calls and send EAGAIN next to the server's receive calls,
// and charts them dashed ("snd"); the stamp decides, not the panel's
// workload (issues 13 and 17).
func TestWriteSamplesShowTheSendersCalls(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, size[0], size[1])
		for k := 1; k <= 8; k++ {
			s := sample("B", float64(k)*0.25, true)
			s.Settings.Workload = model.WorkWrite
			s.Server.RecvCallsPer2MiB = 22.9
			s.Client.SendCallsPer2MiB, s.Client.SendEAGAINPer2MiB = 4.1, 3.7
			h.send(model.Update{Sample: &s})
		}
		v := h.view()
		if size[0] == 80 {
			h.press("tab") // the narrow layout shows one side
			v = h.view()
			for _, want := range []string{"22.9 per 2MiB (server recv)", "4.10 + 3.70 EAGAIN (client)"} {
				if !strings.Contains(v, want) {
					t.Errorf("80x24: no %q:\n%s", want, v)
				}
			}
			continue
		}
		for _, want := range []string{"recv calls  22.9 per 2 MiB (server)", "send calls  4.10 per 2 MiB (client)", "3.70 send", "━━ rcv 22.9 ┅┅ snd 4.10"} {
			if !strings.Contains(v, want) {
				t.Errorf("160x48: no %q:\n%s", want, v)
			}
		}
		if h.m.cfg.Sides[1].Workload == model.WorkWrite {
			t.Fatal("the test means the panel's own workload to stay read")
		}
	}
}

// v pages to the wake-ups chart, whose legend carries each side's client
// and server voluntary context switches per 2 MiB (issue 15 §3).
func TestVReachesTheWakeupsChart(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.feed(40, 10)
	for i := 0; i < len(h.m.charts.defs()) && !strings.Contains(h.view(), "wake-ups"); i++ {
		h.press("v")
	}
	v := h.view()
	if !strings.Contains(v, "wake-ups") || !strings.Contains(v, "cli 12.4") || !strings.Contains(v, "srv 3.60") {
		t.Errorf("v did not reach the wake-ups chart:\n%s", v)
	}
}

// TestKeyExecPrompt: e prompts for a real client command as the focused
// side's load and applies it; - goes back to our load.
func TestKeyExecPrompt(t *testing.T) {
	h := newHarness(t, Options{}, 100, 24)
	h.openPrompt("B exec = ", "2", "e")
	h.submitLeaves("nbdcopy {uri} null:", stNormal, "a command did not close the prompt")
	h.wantApplied(ch(1, "exec", "nbdcopy {uri} null:"))
}

// The engine's no-op warning (a keyed or scripted change to the value in
// force) is a message of the moment on the status line, not the panel's:
// the panel kept it, two lines below the panels at 80 columns, for the
// rest of the run.
func TestNoOpWarningIsAMessage(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	w := model.Warn("B", model.NoOpChange{Setting: model.SetSndBuf, Value: "2m"})
	h.send(model.Update{Warning: &w})
	if h.m.panels[1].warn != nil {
		t.Errorf("the panel keeps the no-op warning: %+v", h.m.panels[1].warn)
	}
	if h.m.msg.kind != msgWarn || !strings.Contains(h.m.msg.text, "sndbuf is 2m already") {
		t.Errorf("the status line: %v %q, want the warning", h.m.msg.kind, h.m.msg.text)
	}
}
