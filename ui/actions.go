package ui

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/engine"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/phrase"
	"nbdscope/platform"
	"nbdscope/units"
)

// stepBuf returns the buffer ladder's value next to b in direction dir
// (+1/-1) as the settings table steps it, from def at default (its
// effective size), or false at the end of the ladder. top > 0 ends the
// ladder at the kernel's limit (Limit.LadderTop: where it refuses what is
// above).
func stepBuf(b model.Buf, dir, def, top int) (string, bool) {
	v, ok := model.BufferSettings()[0].Step(model.Value{Buf: b}, dir, def)
	if !ok || dir > 0 && top > 0 && v.Buf.Bytes > top {
		return "", false
	}
	return v.Buf.String(), true
}

// osDefault is a buffer's effective size at default on a side: what this
// OS gives a fresh socket of the side's transport (the platform facts,
// probed at the start), 0 when it is not known. + and - step from it.
func (m *Model) osDefault(side int, st *model.Setting) int {
	f := m.com.facts
	tcp := m.cfg.Sides[side].Transport == model.TransportTCP
	switch {
	case st.Socket == nbd.RecvBuf && tcp:
		return f.TCPRcvbufDefault
	case st.Socket == nbd.RecvBuf:
		return f.UnixRcvbufDefault
	case tcp:
		return f.TCPSndbufDefault
	}
	return f.UnixSndbufDefault
}

// ladderEnd says why + or - went no further: a default of unknown size,
// the bottom or the top of the ladder, or the kernel's limit, with the
// command that lifts it.
func ladderEnd(name string, st *model.Setting, b model.Buf, def, dir int, lim platform.Limit) string {
	if b.Kind == model.BufDefault && def <= 0 {
		return fmt.Sprintf("%s %s is at the OS default, whose size this OS did not report: + and - have nothing to step from (= sets a size)", name, st.Name)
	}
	if dir < 0 {
		return fmt.Sprintf("%s %s is at %s: the ladder starts at 4k (= sets any size, or default)", name, st.Name, b)
	}
	next, ok := st.Step(model.Value{Buf: b}, dir, def)
	if !ok {
		return fmt.Sprintf("%s %s is at %s: the ladder ends at 8m (= sets any size)", name, st.Name, b)
	}
	c, _ := lim.Refuses(st.Socket, next.Buf.Bytes)
	return fmt.Sprintf("%s %s stops at %s: %s is above this kernel's limit of %s (%s); = sets any size up to it. Fix: %s",
		name, st.Name, b, next.Buf, platform.HumanSize(lim.MaxRequest), lim.Sysctl, c.Fix)
}

// bufTarget is what the buffer keys (+, -, =) act on; k cycles it: 0 is
// the bulk sender's send buffer(s), by workload (model.SenderBuffers),
// then each buffer of the settings table in turn (model.Buffers).
type bufTarget int

const targetSender bufTarget = 0

func numTargets() bufTarget { return bufTarget(1 + len(model.BufferSettings())) }

// targetName names a target for people.
func targetName(t bufTarget) string {
	if t == targetSender {
		return "the sender's send buffer"
	}
	return model.BufferSettings()[t-1].Label
}

// bufSettings are the settings the buffer keys act on for a side, the
// one the panel names first.
func (m *Model) bufSettings(side int) []*model.Setting {
	return m.panels[side].steppedFor(m.bufTarget[side])
}

// stepBuffers steps the buffers the keys act on, together, from the first
// one's value.
func (m *Model) stepBuffers(dir int) tea.Cmd {
	side := m.focus
	sc := m.cfg.Sides[side]
	sts := m.bufSettings(side)
	cur := sc.Value(sts[0]).Buf
	def := m.osDefault(side, sts[0])
	lim := m.com.facts.SndbufLimit
	v, ok := sts[0].Step(model.Value{Buf: cur}, dir, def)
	if !ok || dir > 0 && lim.LadderTop() > 0 && v.Buf.Bytes > lim.LadderTop() {
		m.setMsg(msgInfo, ladderEnd(sc.Name, sts[0], cur, def, dir, lim))
		return nil
	}
	return m.changeAll(side, sts, v)
}

// changeAll changes several settings of a side to one value.
func (m *Model) changeAll(side int, sts []*model.Setting, v model.Value) tea.Cmd {
	var cmds []tea.Cmd
	for _, st := range sts {
		cmds = append(cmds, m.change(side, st, v))
		if m.msg.kind == msgError {
			break
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) cycleTarget() tea.Cmd {
	side := m.focus
	m.bufTarget[side] = (m.bufTarget[side] + 1) % numTargets()
	m.recompute() // the panel's first line names the new target
	var names []string
	for _, st := range m.bufSettings(side) {
		names = append(names, st.Name)
	}
	m.setMsg(msgInfo, fmt.Sprintf("%s: + - = act on %s (%s)", m.cfg.Sides[side].Name, targetName(m.bufTarget[side]), strings.Join(names, " and ")))
	return nil
}

// onKeys takes a key message. Keys typed faster than the terminal is
// read (a slow link, tmux send-keys) arrive as one message of several
// runes ("2++"): outside a text field each is a key of its own, so none
// is lost.
func (m *Model) onKeys(k tea.KeyMsg) tea.Cmd {
	if k.Type != tea.KeyRunes || len(k.Runes) < 2 || k.Paste || k.Alt {
		return m.onKey(k)
	}
	var cmds []tea.Cmd
	for i := range k.Runes {
		if m.state == stInput || (m.state == stPicker && m.picker.list.SettingFilter()) {
			// The rest is text for the field.
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[i:]}))
			break
		}
		cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[i : i+1]}))
	}
	return tea.Batch(cmds...)
}

// keyAction is a key and what it does.
type keyAction struct {
	key key.Binding
	run func() tea.Cmd
}

// actions is the key→action table: the explorer's own keys, then a step
// of a setting for each key the settings table gives (KeyMap.Settings).
func (m *Model) actions() []keyAction {
	km := m.keys
	do := func(f func()) func() tea.Cmd { return func() tea.Cmd { f(); return nil } }
	a := []keyAction{
		{km.Help, do(m.toggleHelp)},
		{km.NextSide, do(func() { m.focus = 1 - m.focus })},
		{km.PrevSide, do(func() { m.focus = 1 - m.focus })},
		{km.SideA, do(func() { m.focus = 0 })},
		{km.SideB, do(func() { m.focus = 1 })},
		{km.BufUp, func() tea.Cmd { return m.stepBuffers(1) }},
		{km.BufDown, func() tea.Cmd { return m.stepBuffers(-1) }},
		{km.BufExact, do(func() { m.openInput(inputSndBuf) })},
		{km.Exec, do(func() { m.openInput(inputExec) })},
		{km.Server, do(func() { m.openInput(inputServer) })},
		{km.BufTarget, m.cycleTarget},
		{km.Gap, m.gap},
		{km.Restart, m.restart},
		{km.Presets, m.openPicker},
		{km.Baseline, m.openBaselinePicker},
		{km.ClearBaseline, do(m.clearBaseline)},
		{km.Save, do(m.openSave)},
		{km.Clear, do(func() { m.charts.clear(); m.setMsg(msgInfo, "charts cleared") })},
		{km.Latency, do(m.toggleLatency)},
		{km.Charts, do(m.nextCharts)},
	}
	for _, sk := range km.Settings {
		a = append(a, keyAction{sk.Binding, func() tea.Cmd { return m.stepSetting(sk.Setting, sk.Dir) }})
	}
	return a
}

func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return m.quit()
	}
	if m.isTooSmall() {
		// The screen says only that it is too small and that q quits: a
		// key typed blind would change a setting, a side or a prompt no
		// one can see (issue 33: at 20x10 keys changed the client
		// sndbuf, the mode, the connections).
		if key.Matches(k, m.keys.Quit) {
			return m.quit()
		}
		return nil
	}
	switch m.state {
	case stInput:
		return m.inputKey(k)
	case stConfirm:
		return m.confirmKey(k)
	case stPicker:
		return m.pickerKey(k)
	case stHelp:
		if key.Matches(k, keyClose) {
			m.state = stNormal
			return nil
		}
		if key.Matches(k, keyHelpPage) {
			m.helpPage, m.helpOff = 1-m.helpPage, 0
			return nil
		}
		if m.scrollHelp(k) {
			return nil
		}
	}
	if key.Matches(k, m.keys.Quit) {
		return m.quit()
	}
	if m.quitting {
		return nil
	}
	if m.msg.kind != msgNone {
		m.msg = message{}
	}
	for _, a := range m.actions() {
		if key.Matches(k, a.key) {
			return a.run()
		}
	}
	return nil
}

func (m *Model) toggleHelp() {
	if m.state == stHelp {
		m.state = stNormal
		return
	}
	m.state = stHelp
	m.helpOff, m.helpPage = 0, helpKeys
}

func (m *Model) openSave() {
	if m.opts.SavePreset == nil {
		m.setMsg(msgWarn, "presets not available: saving needs the presets store")
		return
	}
	m.openInput(inputPresetName)
}

func (m *Model) toggleLatency() {
	m.charts.latency = !m.charts.latency
	m.charts.page = 0
	if !m.charts.latency {
		m.setMsg(msgInfo, "latency chart off")
		return
	}
	msg := "latency chart on (p50 solid, p99 dashed)"
	isLatency := func(d chartDef) bool { return d.name == chartLatency.name }
	if shown, _, _, paging := m.charts.layout(); paging && !slices.ContainsFunc(shown, isLatency) {
		// Not every chart fits (80x24 shows one), and the first page
		// would leave the chart just asked for out of sight: start there.
		m.charts.page = slices.IndexFunc(m.charts.defs(), isLatency)
		msg += "; v shows the others"
	}
	m.setMsg(msgInfo, msg)
}

func (m *Model) nextCharts() {
	if m.charts.paging() {
		m.charts.nextPage()
	} else {
		m.setMsg(msgInfo, "every chart is shown")
	}
}

// shown is what the panels show: the configuration and pauses.
func (m *Model) shown() pairState { return pairState{Cfg: m.cfg, Paused: m.paused} }

// stepSetting steps the focused side's setting (or the pair's) one key's
// worth, as the settings table says.
func (m *Model) stepSetting(st *model.Setting, dir int) tea.Cmd {
	side := m.focus
	ps := m.shown()
	cur := st.Get(&ps, side)
	def := 0
	if st.Type == model.TypeBuf {
		def = m.osDefault(side, st)
	}
	v, ok := st.Step(cur, dir, def)
	if !ok {
		m.setMsg(msgInfo, fmt.Sprintf("%s %s is at its limit (%s)", m.cfg.Sides[side].Name, strings.ReplaceAll(st.Name, "-", " "), st.Format(cur)))
		return nil
	}
	return m.change(side, st, v)
}

// change validates a setting against the configuration the panel shows,
// shows it at once, and queues the engine call.
func (m *Model) change(side int, st *model.Setting, v model.Value) tea.Cmd {
	return m.changeAs(opApply, side, st, v)
}

func (m *Model) changeAs(kind opKind, side int, st *model.Setting, v model.Value) tea.Cmd {
	ps := m.shown()
	cur := st.Get(&ps, side)
	if err := putValue(&ps, side, st, v); err != nil {
		m.setErr(err)
		return nil
	}
	if v == cur {
		// The value in force: warned of at once, and sent all the same,
		// as a scripted one is, so the engine marks its event a no-op
		// (Event.NoOp) in the events and the saved run.
		m.setMsg(msgWarn, "▲ "+phrase.WarningLong(model.Warn(model.SideAt(side), model.NoOpChange{Setting: st.Name, Value: st.Format(cur)})))
	}
	ch := model.Change{Side: side, Setting: st, Value: v}
	opSide := side
	if st.PairWide {
		opSide = -1
	}
	return m.enqueue(op{
		kind: kind, side: opSide, st: st, v: v,
		run:   func(c engine.Controller) error { return engine.ApplyTo(c, ch) },
		local: func(ps *pairState) { putValue(ps, side, st, v) },
	})
}

// putValue puts a value in a state, checking a side's configuration with
// it; ps is left as it was on error.
func putValue(ps *pairState, side int, st *model.Setting, v model.Value) error {
	if !st.InSideConfig() {
		st.Put(ps, side, v)
		return nil
	}
	sc := ps.Cfg.Sides[side]
	if err := sc.SetValue(st, v); err != nil {
		return err
	}
	ps.Cfg.Sides[side] = sc
	return nil
}

// gap shows the macOS/Linux difference in one view: A at macOS's 8 KiB,
// B at 2 MiB, each on its bulk sender's send buffer (the server's for
// reads, the client's for writes).
func (m *Model) gap() tea.Cmd {
	bufs := [2]model.Buf{{Kind: model.BufMacOS}, {Kind: model.BufSize, Bytes: 2 << 20}}
	already := true
	ps := m.shown()
	for side, b := range bufs {
		for _, st := range m.panels[side].senderBuffers() {
			already = already && st.Get(&ps, side) == model.Value{Buf: b}
		}
	}
	var cmds []tea.Cmd
	for side, b := range bufs {
		// A buffer in force already is left alone (B starts at 2m), unless
		// the whole gap is: then the key is a no-op, sent as one so that
		// its events are marked so.
		var sts []*model.Setting
		for _, st := range m.panels[side].senderBuffers() {
			if already || st.Get(&ps, side) != (model.Value{Buf: b}) {
				sts = append(sts, st)
			}
		}
		cmds = append(cmds, m.changeAll(side, sts, model.Value{Buf: b}))
		if m.msg.kind == msgError {
			return tea.Batch(cmds...)
		}
	}
	if already {
		m.setMsg(msgWarn, "▲ gap: A is at macOS's 8k and B at 2m already (no-op)"+m.notXNU())
	} else {
		m.setMsg(msgInfo, "gap: A at macOS's 8k, B at 2m"+m.notXNU())
	}
	return tea.Batch(cmds...)
}

// restart restarts the focused side if it crashed, else the crashed one.
func (m *Model) restart() tea.Cmd {
	side := -1
	if m.panels[m.focus].crash != nil {
		side = m.focus
	} else if m.panels[1-m.focus].crash != nil {
		side = 1 - m.focus
	}
	if side < 0 {
		m.setMsg(msgInfo, "no side has crashed (! restarts a crashed side)")
		return nil
	}
	m.setMsg(msgInfo, "restarting side "+m.cfg.Sides[side].Name+"…")
	return m.enqueue(op{
		kind: opRestart, side: side,
		run: func(c engine.Controller) error { return c.Restart(side) },
	})
}

func (m *Model) openInput(kind inputKind) {
	m.state = stInput
	m.inputKind = kind
	m.inputErr = ""
	m.inputBusy = false
	m.input.Reset()
	m.input.CharLimit = 64 // a size, a name
	switch kind {
	case inputSndBuf:
		m.input.Prompt = m.cfg.Sides[m.focus].Name + " " + m.bufSettings(m.focus)[0].Name + " = "
		m.input.Placeholder = "64k, 2m, default or macos"
	case inputExec:
		m.input.Prompt = m.cfg.Sides[m.focus].Name + " exec = "
		m.input.CharLimit = 4096 // a client's command line, as long as it is
		m.input.Placeholder = "a command with {uri}, {socket}, {size}; - for our load"
	case inputServer:
		m.input.Prompt = m.cfg.Sides[m.focus].Name + " server = "
		m.input.CharLimit = 4096
		m.input.Placeholder = "a command with {socket} (tcp: {port}), {size}; - for ours"
	case inputPresetName:
		m.input.Prompt = "save preset as: "
		if m.runPath("x") != "" {
			m.input.Prompt = "save preset + run as: "
		}
		m.input.Placeholder = "a name (letters, digits, . _ -)"
	}
	m.input.Focus()
}

func (m *Model) inputKey(k tea.KeyMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.state = stNormal
		m.input.Blur()
		m.setMsg(msgInfo, "cancelled")
		return nil
	case "enter":
		if m.inputBusy {
			return nil
		}
		v := strings.TrimSpace(m.input.Value())
		if v == "" {
			m.inputErr = "type a value, or esc to cancel"
			return nil
		}
		if m.inputKind == inputSndBuf {
			return m.exactBuffers(v)
		}
		if m.inputKind == inputExec {
			return m.setCommand(model.SetExec, v)
		}
		if m.inputKind == inputServer {
			return m.setCommand(model.SetServer, v)
		}
		// The prompt stays open until the name is saved: a name the
		// store refuses is cleared, with the reason.
		m.inputBusy, m.inputErr = true, ""
		return m.save(v, false)
	}
	// A rejection's reason stays in view while the next value is typed.
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// reject clears a prompt's rejected text, so that what is typed next is a
// new value, not an addition to the old one ("3x" then "=64m" is not
// "3x=64m"), and says why it was rejected.
func (m *Model) reject(reason string) {
	m.input.Reset()
	m.inputErr, m.inputBusy = reason, false
}

// exactBuffers sets the buffers the keys act on to a typed value, parsed
// here once; a bad value keeps the prompt open with the reason.
func (m *Model) exactBuffers(text string) tea.Cmd {
	side := m.focus
	sts := m.bufSettings(side)
	v, err := sts[0].Parse(text)
	if err != nil {
		m.reject(err.Error())
		return nil
	}
	if ps := m.shown(); sts[len(sts)-1].Get(&ps, side) == v {
		m.state = stNormal
		m.input.Blur()
	}
	var cmds []tea.Cmd
	for i, st := range sts {
		kind := opApply
		if i == len(sts)-1 && m.state == stInput {
			kind = opExact // its outcome closes the prompt
		}
		cmds = append(cmds, m.changeAs(kind, side, st, v))
		if m.msg.kind == msgError { // the side refuses it: say why in the prompt
			m.reject(strings.TrimPrefix(m.msg.text, "✗ "))
			m.msg = message{}
			return tea.Batch(cmds...)
		}
	}
	if m.state == stInput {
		m.inputBusy, m.inputErr = true, ""
	}
	return tea.Batch(cmds...)
}

func (m *Model) confirmKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, keyYes):
		m.state = stNormal
		return m.save(m.confirmName, true)
	case key.Matches(k, keyNo):
		m.state = stNormal
		m.setMsg(msgInfo, fmt.Sprintf("kept the existing preset %q", m.confirmName))
	}
	return nil
}

// save queues saving the configuration in effect (after queued changes).
func (m *Model) save(name string, overwrite bool) tea.Cmd {
	kind, fn := opSave, m.opts.SavePreset
	if overwrite {
		kind, fn = opOverwrite, m.opts.OverwritePreset
	}
	if fn == nil {
		m.setMsg(msgWarn, "presets not available")
		return nil
	}
	note, path, from := new(string), m.runPath(name), m.preset
	return m.enqueue(op{
		kind: kind, side: -1, name: name, note: note,
		run: func(c engine.Controller) error {
			if err := fn(name, c.Config(), from); err != nil {
				return err
			}
			if path != "" {
				*note = savedRun(path)
			}
			return nil
		},
	})
}

// setCommand makes the focused side's load (exec) or server (server) the
// typed command ("-": our own again); the side restarts with it.
func (m *Model) setCommand(name, text string) tea.Cmd {
	st, _ := model.Lookup(name)
	if text == "-" {
		text = ""
	}
	v, err := st.Parse(text)
	if err == nil {
		ps := m.shown()
		err = putValue(&ps, m.focus, st, v) // the side's check: quotes, a target
	}
	if err != nil {
		if why := errors.Unwrap(err); why != nil {
			// The prompt holds the command: echoed in front of the
			// reason ("exec=qemu-img convert …: "), it pushed the reason's
			// end, the way out, off an 80-column screen.
			err = why
		}
		m.reject(err.Error())
		return nil
	}
	m.state = stNormal
	m.input.Blur()
	return m.changeAs(opApply, m.focus, st, v)
}

// savedRun names the run file a save wrote, with its size, for the
// message after the save.
func savedRun(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return " and the run to " + path
	}
	return fmt.Sprintf(" and the run to %s (%s)", path, units.FormatBytes(float64(fi.Size())))
}

// notXNU says, where this is not a Mac, that macOS's buffer runs on this
// kernel and what the series measured on a real Mac, so that nobody quotes
// this machine's B/A as macOS's.
func (m *Model) notXNU() string {
	// The series' figure for what A does: 12.6x reading, 9.2x writing.
	e := model.MacOSEmulationFor(m.com.facts, m.cfg.Sides[0].Workload, "A")
	if e == nil || e.SeriesSpeedup == 0 {
		return ""
	}
	return fmt.Sprintf(" — this %s kernel, not XNU (a real Mac: %gx in the series)", m.com.facts.OS, e.SeriesSpeedup)
}
