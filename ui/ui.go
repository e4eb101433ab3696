// Package ui is nbdscope's terminal explorer: a bubbletea program that
// shows a running pair of NBD sides (header, a panel per side, live charts)
// and turns keys into live changes of the pair.
//
// The UI depends on engine.Controller only. It never moves bulk data and
// never blocks on the engine: every call that may wait (Apply, SetMode,
// SetPaused, Restart, Stop and the preset hooks) runs as a tea.Cmd, one at
// a time and in order, and the panels show the change at once
// (optimistically) until the engine's configuration confirms it. Engine
// updates arrive through a re-armed command reading Controller.Updates;
// samples only mark the screen dirty, and a 250 ms frame tick redraws it,
// so the screen refreshes at most four times a second however fast samples
// come.
package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

// Options configure the explorer. The preset hooks are plain functions so
// that the presets package can be wired in by the command; a nil hook makes
// its key say that presets are not available.
type Options struct {
	// PresetName is shown in the header ("" for none).
	PresetName string
	// PresetConfig is the configuration of that preset: the header marks
	// the preset modified (linux-gap*) when the pair's differs, also at
	// the start (flags on top of the preset). Nil: the pair's
	// configuration at the start.
	PresetConfig *model.Config
	// Window is the time the charts show (default 60 s).
	Window time.Duration
	// RateUnit is the unit every rate is shown in (--rate-unit); nil:
	// binary units that fit.
	RateUnit *units.RateScale

	// LoadPresets lists the presets for the picker (`p`).
	LoadPresets func() ([]PresetItem, error)
	// ApplyPreset applies a picked preset to the running pair. When nil,
	// the UI applies the preset's configuration with ApplyConfig.
	ApplyPreset func(item PresetItem) error
	// SavePreset saves the configuration in effect under a name (`s`). It
	// must not replace an existing preset: it returns an error wrapping
	// ErrPresetExists (or fs.ErrExist) instead, and the UI asks the user.
	SavePreset SaveFunc
	// OverwritePreset replaces a preset after the user confirmed it. When
	// nil, an existing name cannot be overwritten from the UI.
	OverwritePreset SaveFunc
	// RunPath, when set, says that saving a preset (s) also writes the
	// run so far under the same name, and where: the help, the prompt and
	// the message after the save name the file.
	RunPath func(name string) string

	// LoadRuns lists the saved runs for the baseline picker (`b`); one
	// broken run file may come back as an error beside the others.
	LoadRuns func() ([]RunItem, error)
	// LoadRun reads a saved run, drawn faintly behind the live series as
	// a baseline. With either hook nil, `b` says runs are not available.
	LoadRun func(name string) (model.Report, error)
}

// PresetItem is one entry of the preset picker.
type PresetItem struct {
	Name        string
	Description string
	BuiltIn     bool
	Config      model.Config
}

// SaveFunc saves cfg, the configuration in effect, under name; from is
// the preset the header names (the one started from or last picked, ""
// for none), so that a run saved with it says where it came from.
type SaveFunc func(name string, cfg model.Config, from string) error

// ErrPresetExists is what SavePreset wraps when the name is taken.
var ErrPresetExists = errors.New("preset exists")

func isExists(err error) bool {
	return errors.Is(err, ErrPresetExists) || errors.Is(err, fs.ErrExist)
}

// DefaultWindow is the chart window when Options.Window is zero.
const DefaultWindow = 60 * time.Second

// frameInterval is the shortest time between two frames drawn from
// samples: at most four a second, the rate a chart needs to be read
// (keys redraw at once). Ten a second drew every sample of both sides
// (8 a second at the default interval), a third of the controller's CPU
// for nothing the eye could follow. frameSlack lets a sample that comes
// a little early still draw (the engine's ticks jitter by milliseconds).
const (
	frameInterval = 250 * time.Millisecond
	frameSlack    = 30 * time.Millisecond
)

// clockInterval is the frame timer: a frame is drawn when the samples
// of a round have come (frameDue), in the wake-up that brought them, so
// the timer is only for the clock, once a second when no sample draws.
// A timer of its own at 4 Hz woke the controller four more times a
// second, each wake-up the runtime's monitor's too (bench/README, "The
// controller's own CPU").
const (
	clockInterval = time.Second
	clockSlack    = 5 * time.Millisecond // past the second, so that it has turned
)

// Smallest terminal the explorer draws in.
const (
	minWidth  = 40
	minHeight = 12
)

type state int

const (
	stNormal  state = iota
	stHelp          // full help in the chart area
	stInput         // a textinput in the status line
	stConfirm       // overwrite a preset? y/n
	stPicker        // the preset list in the chart area
)

type inputKind int

const (
	inputSndBuf inputKind = iota
	inputPresetName
	inputExec
	inputServer
)

// pairState is what the panels show: the configuration and pauses, where
// every setting of the table is kept.
type pairState = model.State

type opKind int

const (
	opApply opKind = iota
	opExact
	opRestart
	opPreset
	opSave
	opOverwrite
)

// op is one controller call, queued so calls run one at a time and in
// the order of the keys.
type op struct {
	id    int
	kind  opKind
	side  int
	st    *model.Setting // the setting an opApply or opExact changes
	v     model.Value
	name  string  // preset
	note  *string // what run leaves for the message after it (a save's run file)
	run   func(engine.Controller) error
	local func(*pairState) // the optimistic effect, nil for none
}

type msgKind int

const (
	msgNone msgKind = iota
	msgInfo
	msgEvent
	msgRun // a real client's finished run: no change, no marker
	msgWarn
	msgError
)

type message struct {
	kind msgKind
	text string
}

// Messages.
type (
	updateMsg        struct{ u model.Update }
	updatesClosedMsg struct{}
	frameMsg         struct{}
	opDoneMsg        struct {
		id  int
		err error
		cfg model.Config
	}
	presetsMsg = listMsg[PresetItem]
	stoppedMsg struct{}
)

// Model is the explorer's root model. Use New.
type Model struct {
	ctrl    engine.Controller
	opts    Options
	keys    KeyMap
	com     *common
	updates <-chan model.Update

	header header
	own    ownMeter // the controller's own CPU, for the header
	frames int      // frames drawn: what the explorer's CPU goes on
	out    *termOut // writes the frames (nil: bubbletea's renderer does, as in tests)
	ticks  int      // frame timer ticks taken: each a wake-up of its own
	// lastFrame is the run's clock at the last frame drawn; sampleAt the
	// clock when each side's last sample came, and sampleT its time
	// (frameDue).
	lastFrame time.Duration
	sampleAt  [2]time.Duration
	sampleT   [2]float64
	bySamples bool // the last frame was drawn from samples
	panels    [2]panel
	charts    charts
	help      help.Model
	picker    picker

	base   pairState // as the engine last told
	cfg    model.Config
	paused [2]bool
	// bufTarget is what each side's buffer keys act on (k cycles it).
	bufTarget [2]bufTarget
	baseCfg   model.Config // of the preset, to mark the header "modified"
	preset    string
	focus     int

	ops    []op
	opBusy bool
	opSeq  int

	state       state
	helpOff     int  // first line of the help shown
	helpPage    int  // the help's page: helpKeys or helpFigures
	helpMore    bool // the help did not fit (last frame)
	input       textinput.Model
	inputKind   inputKind
	inputErr    string
	inputBusy   bool
	confirmName string

	msg      message
	elapsed  time.Duration
	done     bool
	doneErr  error
	closed   bool
	quitting bool
	stopper  *stopper

	frame string
	dirty bool

	foot, footKey string // the last footer, and what it was drawn for
}

// New returns the explorer's model for a running pair.
func New(ctrl engine.Controller, opts Options) tea.Model { return newModel(ctrl, opts) }

func newModel(ctrl engine.Controller, opts Options) *Model {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	st := DefaultStyles()
	com := &common{styles: st, facts: ctrl.Facts()}
	cfg := ctrl.Config()
	m := &Model{
		ctrl: ctrl, opts: opts, keys: DefaultKeyMap(), com: com,
		updates: ctrl.Updates(),
		stopper: &stopper{},
		base:    pairState{Cfg: cfg},
		baseCfg: cfg,
		preset:  opts.PresetName,
		elapsed: ctrl.Elapsed(),
	}
	var names [2]string
	for i := range names {
		names[i] = cfg.Sides[i].Name
		if names[i] == "" {
			names[i] = string(rune('A' + i))
		}
		m.panels[i] = newPanel(com, i)
	}
	if opts.PresetConfig != nil {
		m.baseCfg = *opts.PresetConfig
	}
	m.header = header{com: com}
	m.charts = newCharts(com, opts.Window.Seconds(), names)
	m.charts.now = m.elapsed.Seconds()
	m.help = help.New()
	m.help.Styles.ShortKey = st.Key.Style
	m.help.Styles.ShortDesc = st.KeyDesc.Style
	m.help.Styles.ShortSeparator = st.Dim.Style
	m.help.Styles.FullKey = st.Key.Style
	m.help.Styles.FullDesc = st.KeyDesc.Style
	m.help.Styles.Ellipsis = st.Dim.Style
	m.input = textinput.New()
	m.input.CharLimit = 64
	m.input.PromptStyle = st.Prompt.Style
	m.input.PlaceholderStyle = st.Dim.Style
	m.input.Cursor.SetMode(cursor.CursorStatic)
	m.picker = newPicker(com)
	m.recompute()
	return m
}

// Run runs the explorer in the terminal's alternate screen until the user
// quits or the run fails, and makes sure the pair is stopped.
func Run(ctrl engine.Controller, opts Options) error {
	shownRate.Store(opts.RateUnit)
	m := newModel(ctrl, opts)
	// On a terminal the model writes its frames itself (termOut), in the
	// Update that draws them; bubbletea reads the keys and runs the model.
	own, ok, err := takeTerminal()
	if err != nil {
		return err
	}
	progOpts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithFPS(10)}
	if ok {
		m.out = own.out2
		progOpts = []tea.ProgramOption{tea.WithoutRenderer()}
	}
	p := tea.NewProgram(m, progOpts...)
	// A closed terminal (SIGHUP) ends the explorer like q, so that the
	// pair is stopped and its socket directory removed (bubbletea handles
	// SIGINT and SIGTERM itself; SIGHUP would kill the process outright).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ended := make(chan struct{})
	go func() {
		select {
		case <-hup:
			p.Quit()
		case <-ended:
		}
	}()
	if ok {
		go own.watchSize(p, ended)
	}
	final, err := p.Run()
	if ok {
		if gerr := own.give(); err == nil {
			err = gerr
		}
	}
	signal.Stop(hup)
	close(ended)
	fm, _ := final.(*Model)
	// Stop the pair, or wait for the stop a quit key started: a second
	// quit key leaves the program before it is done, and the children and
	// their sockets must be gone when Run returns.
	var serr error
	if fm != nil {
		serr = fm.stopper.stop(ctrl)
	} else {
		serr = ctrl.Stop()
	}
	if err == nil {
		err = serr
	}
	if err == nil && fm != nil && fm.doneErr != nil {
		err = fm.doneErr
	}
	return err
}

// Init starts reading updates and the frame tick.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.waitUpdate(), frameTick(clockInterval))
}

func frameTick(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return frameMsg{} })
}

// nextTick is how long until the frame timer is next due: while samples
// draw, a clock interval after the last frame (the next sample's frame
// makes the tick's unneeded); else when the clock's second next turns,
// so that an idle explorer's clock moves on the second.
func (m *Model) nextTick() time.Duration {
	e := m.ctrl.Elapsed()
	at := m.lastFrame + clockInterval
	if !m.bySamples || at < e {
		at = (e/time.Second+1)*time.Second + clockSlack
	}
	return min(max(at-e, clockSlack), clockInterval)
}

// frameDue notes side i's sample (taken at t, the run's clock in
// seconds) and says whether to draw now: once the last frame is
// frameInterval old and the round's samples have all come, that is each
// other side's last one was taken with this one (the engine polls both
// sides at once), or it sent none for a clock interval (it is down, or
// has no load).
func (m *Model) frameDue(i int, t float64) bool {
	e := m.ctrl.Elapsed()
	m.sampleAt[i], m.sampleT[i] = e, t
	if d := e - m.lastFrame; d >= 0 && d < frameInterval-frameSlack { // (a clock set back: a new run)
		return false
	}
	for j := range m.sampleT {
		live := m.sampleAt[j] > 0 && e-m.sampleAt[j] < clockInterval
		if j != i && live && math.Abs(m.sampleT[j]-t) > frameSlack.Seconds() {
			return false
		}
	}
	return true
}

// frameWork is what a frame reads besides the samples: the clock and
// the controller's own CPU; either marks the screen dirty when it moved.
func (m *Model) frameWork() {
	if m.done || m.quitting {
		return
	}
	e := m.ctrl.Elapsed()
	if e/time.Second != m.elapsed/time.Second {
		m.dirty = true
	}
	m.elapsed = e
	if cpu, ok := m.ctrl.OwnCPU(); m.own.read(e, cpu, ok) {
		m.dirty = true
	}
	if s := e.Seconds(); s > m.charts.now {
		m.charts.now = s
	}
}

// waitUpdate reads one engine update; it is re-armed after each.
func (m *Model) waitUpdate() tea.Cmd {
	ch := m.updates
	if ch == nil || m.closed {
		return nil
	}
	return func() tea.Msg {
		u, ok := <-ch
		if !ok {
			return updatesClosedMsg{}
		}
		return updateMsg{u}
	}
}

// Update handles a message. It is cheap: samples only mark the screen
// dirty; keys, size changes and rare engine messages redraw at once.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	redraw, bySamples := false, false
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.com.width, m.com.height = max(msg.Width, 0), max(msg.Height, 0)
		if m.out != nil {
			m.out.repaint()
		}
		redraw = true
	case updateMsg:
		redraw = m.onUpdate(msg.u)
		if smp := msg.u.Sample; !redraw && smp != nil && smp.Side.Index() >= 0 && m.frameDue(smp.Side.Index(), smp.T) {
			m.frameWork()
			redraw, bySamples = m.dirty, true
		}
		cmd = m.waitUpdate()
	case updatesClosedMsg:
		m.closed = true
		if !m.done {
			m.done = true
			m.setMsg(msgInfo, "the run ended")
		}
		redraw = true
	case frameMsg:
		m.ticks++
		m.frameWork()
		// While samples draw, their frames show the clock too: the
		// timer draws only once they have stopped for a clock interval.
		d := m.ctrl.Elapsed() - m.lastFrame
		redraw = m.dirty && (!m.bySamples || d < 0 || d >= clockInterval-frameSlack)
		if !redraw {
			cmd = frameTick(m.nextTick())
		}
	case tea.KeyMsg:
		cmd = m.onKeys(msg)
		redraw = true
	case opDoneMsg:
		cmd = m.onOpDone(msg)
		redraw = true
	case presetsMsg:
		m.onPresets(msg)
		redraw = true
	case runsMsg:
		m.onRuns(msg)
		redraw = true
	case baselineMsg:
		m.onBaseline(msg)
		redraw = true
	case stoppedMsg:
		return m, tea.Quit
	default:
		if m.state == stInput {
			m.input, cmd = m.input.Update(msg)
			redraw = true
		} else if m.state == stPicker {
			m.picker.list, cmd = m.picker.list.Update(msg)
			redraw = true
		}
	}
	if redraw {
		m.frame = m.render()
		if m.out != nil {
			_, _ = m.out.frame(m.frame) // as bubbletea's renderer, a failed write is not the model's
		}
		m.dirty = false
		m.frames++
		m.lastFrame, m.bySamples = m.ctrl.Elapsed(), bySamples
	}
	if _, tick := msg.(frameMsg); tick && redraw {
		cmd = frameTick(m.nextTick())
	}
	return m, cmd
}

// View returns the last frame drawn.
func (m *Model) View() string { return m.frame }

// onWarning shows an engine warning, in the phrasebook's words: in its
// side's panel, or (the whole pair's) on the status line, in its short
// form, which names the key that lifts it where one does.
func (m *Model) onWarning(w model.Warning) {
	if i := w.Side.Index(); i >= 0 {
		if w.Kind == model.WarnExecFlow || w.Kind == model.WarnNoOp {
			// The panel says it while it holds (flowNote); the
			// status line has the whole warning once. A no-op is
			// of the moment (a key or a script's change), not of
			// the side: in the panel it stayed for the whole run.
			m.setMsg(msgWarn, "▲ "+phrase.WarningLong(w))
		} else {
			m.panels[i], _ = m.panels[i].Update(model.Update{Warning: &w}) // the panel words it (phrase)
		}
		return
	}
	t := "▲ " + phrase.WarningShort(w)
	if w.What == nil && w.Fix != "" { // a kind the phrasebook does not know
		t += " — " + w.Fix
	}
	m.setMsg(msgWarn, t)
}

// onUpdate takes an engine update and reports whether to redraw now.
func (m *Model) onUpdate(u model.Update) bool {
	switch {
	case u.Sample != nil:
		s := *u.Sample
		i := s.Side.Index()
		if i < 0 || math.IsNaN(s.T) || math.IsInf(s.T, 0) {
			return false
		}
		m.panels[i], _ = m.panels[i].Update(model.Update{Sample: &s})
		// A real client's samples say which way it moves its data: the
		// buffers the keys step (and the panel names first) follow.
		m.panels[i], _ = m.panels[i].Update(m.panelState(i, m.pendingSides()))
		m.legendOf(i)
		if s.Active {
			m.charts.add(i, s)
		} else if s.T > m.charts.now {
			m.charts.now = s.T
		}
		m.dirty = true
		return false
	case u.Event != nil:
		ev := *u.Event
		m.applyEvent(ev)
		m.charts.addEvent(ev)
		m.noteEvent(ev)
	case u.Crash != nil:
		c := *u.Crash
		if i := c.Side.Index(); i >= 0 {
			m.panels[i], _ = m.panels[i].Update(model.Update{Crash: &c})
		} else {
			m.setMsg(msgError, fmt.Sprintf("✗ %s crashed: %s", c.Role, c.Status))
		}
	case u.Warning != nil:
		m.onWarning(*u.Warning)
	case u.Done != nil:
		m.done = true
		m.doneErr = u.Done.Err
		if m.quitting {
			// The run ends because we stopped it: the engine reports
			// its cancelled context, which is no failure.
			if errors.Is(m.doneErr, context.Canceled) {
				m.doneErr = nil
			}
			break
		}
		if u.Done.Err != nil {
			m.setMsg(msgError, "the run failed: "+u.Done.Err.Error())
		} else {
			m.setMsg(msgInfo, "the run ended")
		}
	default:
		return false
	}
	return true
}

// applyEvent brings the engine's configuration up to date with a change
// that took effect (scripted changes arrive this way too).
func (m *Model) applyEvent(ev model.Event) {
	st, ok := model.Lookup(ev.Setting)
	i := ev.Side.Index()
	if !ok || st.PerSide() && i < 0 {
		return
	}
	v := ev.Value
	if v == (model.Value{}) {
		// An event that came without its typed value (a replayed or
		// hand-made one) is read from its text, and ignored if bad.
		var err error
		if v, err = st.Parse(ev.To); err != nil {
			return
		}
	}
	if st.InSideConfig() {
		sc := m.base.Cfg.Sides[i]
		if sc.SetValue(st, v) != nil {
			return
		}
		m.base.Cfg.Sides[i] = sc
		m.panels[i], _ = m.panels[i].Update(panelChanged{ev.T})
	} else {
		st.Put(&m.base, i, v)
	}
	m.recompute()
}

// noteEvent says an engine event on the status line: a change marked ▲,
// as on the time axis, over any message of the moment; a real client's
// finished run, neither a change nor marked, only over another run's or
// none: a client restarted each 0.25 s wiped the change before it.
func (m *Model) noteEvent(ev model.Event) {
	text := clock(ev.T) + " " + phrase.EventShort(ev) + phrase.EventReachedShort(ev)
	switch {
	case ev.Setting == model.ExecRunEvent:
		if m.msg.kind == msgNone || m.msg.kind == msgRun {
			m.setMsg(msgRun, text)
		}
	case m.msg.kind == msgNone || m.msg.kind == msgEvent || m.msg.kind == msgInfo || m.msg.kind == msgRun:
		m.setMsg(msgEvent, "▲ "+text)
	}
}

// recompute derives what the panels show: the engine's state with the
// queued changes on top.
func (m *Model) recompute() {
	ps := m.base
	for _, o := range m.ops {
		if o.local != nil {
			o.local(&ps)
		}
	}
	m.cfg, m.paused = ps.Cfg, ps.Paused
	pending := m.pendingSides()
	for i := range m.panels {
		m.panels[i], _ = m.panels[i].Update(m.panelState(i, pending))
		m.legendOf(i) // e or S: the legends drop the old runner's figures at once
	}
}

// legendOf gives the charts' legends side i's figures as its panel shows
// them: a waiting side's last turn, its fill, or none of another runner's.
func (m *Model) legendOf(i int) {
	turn, waiting := m.panels[i].shown()
	if !waiting {
		turn = nil
	}
	m.charts.setTurn(i, turn, m.panels[i].othersOnly())
	m.charts.setFill(i, m.panels[i].recentFill())
}

// pendingSides tells, for each side, whether a change of it is queued.
func (m *Model) pendingSides() [2]bool {
	var pending [2]bool
	for _, o := range m.ops {
		if o.side == 0 || o.side == 1 {
			pending[o.side] = true
		}
	}
	return pending
}

// panelState is what side i's panel is told of it.
func (m *Model) panelState(i int, pending [2]bool) panelState {
	return panelState{cfg: m.cfg.Sides[i], target: m.bufTarget[i], paused: m.paused[i],
		pending: pending[i], focused: i == m.focus, compete: m.sidesCompete()}
}

// sidesCompete reports whether the two sides run at once on too few cores
// to have their own: then a process short of its core may have waited for
// the other side, and no pace is claimed.
func (m *Model) sidesCompete() bool {
	f := m.com.facts
	return f.Cores > 0 && f.Cores < 4 && m.cfg.Mode == model.ModeConcurrent
}

func (m *Model) setMsg(k msgKind, text string) { m.msg = message{k, text} }

func (m *Model) setErr(err error) {
	if err != nil {
		m.setMsg(msgError, "✗ "+err.Error())
	}
}

// enqueue queues a controller call. A queued (not yet running) change of
// the same setting is replaced, so holding a key does not pile up calls.
func (m *Model) enqueue(o op) tea.Cmd {
	m.opSeq++
	o.id = m.opSeq
	if n := len(m.ops); n > 1 && o.kind == opApply {
		last := &m.ops[n-1]
		if last.kind == opApply && last.side == o.side && last.st == o.st {
			*last = o
			m.recompute()
			return nil
		}
	}
	m.ops = append(m.ops, o)
	m.recompute()
	if !m.opBusy {
		return m.startOp()
	}
	return nil
}

func (m *Model) startOp() tea.Cmd {
	if len(m.ops) == 0 {
		return nil
	}
	o := m.ops[0]
	m.opBusy = true
	ctrl := m.ctrl
	return func() tea.Msg {
		err := o.run(ctrl)
		return opDoneMsg{id: o.id, err: err, cfg: ctrl.Config()}
	}
}

func (m *Model) onOpDone(msg opDoneMsg) tea.Cmd {
	if len(m.ops) == 0 || m.ops[0].id != msg.id {
		return nil
	}
	o := m.ops[0]
	m.ops = m.ops[1:]
	m.opBusy = false
	m.base.Cfg = msg.cfg
	if o.st != nil && o.st.Where == model.AtPair && msg.err == nil {
		// The controller's Config does not hold a pause.
		o.st.Put(&m.base, o.side, o.v)
	}
	m.recompute()
	switch o.kind {
	case opApply:
		m.setErr(msg.err)
	case opExact:
		if m.state == stInput && m.inputKind == inputSndBuf {
			m.inputBusy = false
			if msg.err != nil {
				m.reject(msg.err.Error())
				break
			}
			m.state = stNormal
		} else {
			m.setErr(msg.err)
		}
		if msg.err == nil {
			m.setMsg(msgInfo, fmt.Sprintf("%s %s = %s", m.cfg.Sides[o.side].Name, o.st.Name, o.st.Format(m.cfg.Sides[o.side].Value(o.st))))
		}
	case opRestart:
		if msg.err != nil {
			m.setErr(msg.err)
			break
		}
		m.panels[o.side], _ = m.panels[o.side].Update(panelRestarted{})
		m.setMsg(msgInfo, "restarted side "+m.cfg.Sides[o.side].Name)
	case opPreset:
		if msg.err != nil {
			m.setErr(fmt.Errorf("preset %s: %w", o.name, msg.err))
			break
		}
		m.preset, m.baseCfg = o.name, msg.cfg
		m.setMsg(msgInfo, fmt.Sprintf("preset %s applied · +/- = act on %s's %s", o.name, m.cfg.Sides[m.focus].Name, m.panels[m.focus].steppedShort()))
	case opSave, opOverwrite:
		m.saved(o, msg)
	}
	return m.startOp()
}

// quit stops the pair (in the background) and then quits; a second quit
// key leaves at once.
func (m *Model) quit() tea.Cmd {
	if m.quitting {
		return tea.Quit
	}
	m.quitting = true
	m.setMsg(msgInfo, "stopping the pair…")
	ctrl, s := m.ctrl, m.stopper
	return func() tea.Msg {
		s.stop(ctrl)
		return stoppedMsg{}
	}
}

// stopper calls Controller.Stop once; a second caller waits for the first
// call to finish and gets its result.
type stopper struct {
	once sync.Once
	err  error
}

func (s *stopper) stop(c engine.Controller) error {
	s.once.Do(func() { s.err = c.Stop() })
	return s.err
}

// saved takes the outcome of a save. The name prompt stays open until the
// name is saved: a name refused is cleared from it, with the reason.
func (m *Model) saved(o op, msg opDoneMsg) {
	prompt := m.state == stInput && m.inputKind == inputPresetName
	if prompt {
		m.inputBusy = false
	}
	switch {
	case msg.err == nil:
		if prompt {
			m.state = stNormal
			m.input.Blur()
		}
		m.preset, m.baseCfg = o.name, msg.cfg
		m.setMsg(msgInfo, "saved preset "+o.name+*o.note)
	case o.kind == opSave && isExists(msg.err) && m.opts.OverwritePreset != nil:
		m.input.Blur()
		m.state = stConfirm
		m.confirmName = o.name
	case isExists(msg.err) && prompt:
		m.reject(fmt.Sprintf("preset %q exists; type another name", o.name))
	case isExists(msg.err):
		m.setMsg(msgError, fmt.Sprintf("✗ preset %q exists; save under another name", o.name))
	case prompt:
		m.reject(msg.err.Error())
	default:
		m.setErr(fmt.Errorf("save preset %s: %w", o.name, msg.err))
	}
}
