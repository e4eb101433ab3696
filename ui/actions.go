package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/engine"
	"nbdscope/engine/platform"
	"nbdscope/nbd"
	"nbdscope/units"
)

// sndbufLadder is what + and - step through.
var sndbufLadder = engine.BufLadder

// stepBuf returns the ladder value next to b in direction dir (+1/-1), or
// false at the end of the ladder. macos counts as 8k (its effective size);
// a size off the ladder steps to the next rung. top > 0 ends the ladder
// at the kernel's limit (Limit.LadderTop: where it refuses what is above).
func stepBuf(b engine.Buf, dir, top int) (string, bool) {
	v, ok := stepLadder(b, dir)
	if n, _ := units.ParseSize(v); ok && dir > 0 && top > 0 && int(n) > top {
		return "", false
	}
	return v, ok
}

func stepLadder(b engine.Buf, dir int) (string, bool) {
	cur := 0 // default
	switch b.Kind {
	case engine.BufMacOS:
		cur = engine.MacOSSendBuffer
	case engine.BufSize:
		cur = b.Bytes
	}
	if dir > 0 {
		for _, s := range sndbufLadder[1:] {
			if n, _ := units.ParseSize(s); int(n) > cur {
				return s, true
			}
		}
		return "", false
	}
	if cur == 0 {
		return "", false
	}
	for i := len(sndbufLadder) - 1; i >= 1; i-- {
		if n, _ := units.ParseSize(sndbufLadder[i]); int(n) < cur {
			return sndbufLadder[i], true
		}
	}
	return "default", true
}

// ladderEnd says why + or - went no further: the top of the ladder, the
// OS default, or the kernel's limit, with the command that lifts it.
func ladderEnd(sc engine.SideConfig, dir int, lim platform.Limit) string {
	if dir < 0 {
		return fmt.Sprintf("%s sndbuf is at the OS default already", sc.Name)
	}
	next, ok := stepLadder(sc.SndBuf, dir)
	if !ok {
		return fmt.Sprintf("%s sndbuf is at 8m, the top of the ladder (= sets any size)", sc.Name)
	}
	n, _ := units.ParseSize(next)
	c, _ := lim.Refuses(nbd.SendBuf, int(n))
	return fmt.Sprintf("%s sndbuf stops at %s: %s is above this kernel's limit of %s (%s); = sets any size up to it. Fix: %s",
		sc.Name, sc.SndBuf, next, platform.HumanSize(lim.MaxRequest), lim.Sysctl, c.Fix)
}

// halve and double step a power-of-two setting within [lo, hi], keeping
// request sizes multiples of 512.
func halve(v, lo, align int) int {
	n := v / 2
	if align > 1 {
		n -= n % align
	}
	return max(n, lo)
}

func double(v, hi int) int { return min(v*2, hi) }

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

func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return m.quit()
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
	km := m.keys
	side := m.focus
	sc := m.cfg.Sides[side]
	switch {
	case key.Matches(k, km.Help):
		if m.state == stHelp {
			m.state = stNormal
		} else {
			m.state = stHelp
			m.helpOff = 0
		}
	case key.Matches(k, km.NextSide), key.Matches(k, km.PrevSide):
		m.focus = 1 - m.focus
	case key.Matches(k, km.SideA):
		m.focus = 0
	case key.Matches(k, km.SideB):
		m.focus = 1
	case key.Matches(k, km.BufUp), key.Matches(k, km.BufDown):
		dir := 1
		if key.Matches(k, km.BufDown) {
			dir = -1
		}
		lim := m.com.facts.SndbufLimit
		v, ok := stepBuf(sc.SndBuf, dir, lim.LadderTop())
		if !ok {
			m.setMsg(msgInfo, ladderEnd(sc, dir, lim))
			return nil
		}
		return m.change(side, engine.SetSndBuf, v)
	case key.Matches(k, km.BufExact):
		m.openInput(inputSndBuf)
	case key.Matches(k, km.Gap):
		return m.gap()
	case key.Matches(k, km.ConnDown):
		return m.stepInt(side, engine.SetConnections, sc.Connections, max(sc.Connections-1, engine.MinConnections))
	case key.Matches(k, km.ConnUp):
		return m.stepInt(side, engine.SetConnections, sc.Connections, min(sc.Connections+1, engine.MaxConnections))
	case key.Matches(k, km.ReqDown):
		return m.stepSize(side, sc.RequestSize, halve(sc.RequestSize, engine.MinRequestSize, 512))
	case key.Matches(k, km.ReqUp):
		return m.stepSize(side, sc.RequestSize, double(sc.RequestSize, engine.MaxRequestSize))
	case key.Matches(k, km.DepthDown):
		return m.stepInt(side, engine.SetInFlight, sc.InFlight, halve(sc.InFlight, engine.MinInFlight, 1))
	case key.Matches(k, km.DepthUp):
		return m.stepInt(side, engine.SetInFlight, sc.InFlight, double(sc.InFlight, engine.MaxInFlight))
	case key.Matches(k, km.Workload):
		next := engine.Workloads[0]
		for i, w := range engine.Workloads {
			if w == sc.Workload {
				next = engine.Workloads[(i+1)%len(engine.Workloads)]
			}
		}
		return m.change(side, engine.SetWorkload, next)
	case key.Matches(k, km.Transport):
		next := "tcp"
		if sc.Transport == "tcp" {
			next = "unix"
		}
		return m.change(side, engine.SetTransport, next)
	case key.Matches(k, km.Placement):
		cur, next := sc.Get(engine.SetPlacement), engine.Placements[0]
		for i, v := range engine.Placements {
			if v == cur {
				next = engine.Placements[(i+1)%len(engine.Placements)]
			}
		}
		return m.change(side, engine.SetPlacement, next)
	case key.Matches(k, km.Mode):
		return m.toggleMode()
	case key.Matches(k, km.Pause):
		return m.togglePause(side)
	case key.Matches(k, km.Restart):
		return m.restart()
	case key.Matches(k, km.Presets):
		return m.openPicker()
	case key.Matches(k, km.Baseline):
		return m.openBaselinePicker()
	case key.Matches(k, km.ClearBaseline):
		m.clearBaseline()
	case key.Matches(k, km.Save):
		if m.opts.SavePreset == nil {
			m.setMsg(msgWarn, "presets not available: saving needs the presets store")
			return nil
		}
		m.openInput(inputPresetName)
	case key.Matches(k, km.Clear):
		m.charts.clear()
		m.setMsg(msgInfo, "charts cleared")
	case key.Matches(k, km.Latency):
		m.charts.latency = !m.charts.latency
		m.charts.page = 0
		if m.charts.latency {
			m.setMsg(msgInfo, "latency chart on (p50 solid, p99 dashed)")
		} else {
			m.setMsg(msgInfo, "latency chart off")
		}
	case key.Matches(k, km.Charts):
		if m.charts.paging() {
			m.charts.nextPage()
		} else {
			m.setMsg(msgInfo, "every chart is shown")
		}
	}
	return nil
}

// change validates a setting against the configuration the panel shows,
// shows it at once, and queues the engine call.
func (m *Model) change(side int, setting, value string) tea.Cmd {
	sc := m.cfg.Sides[side]
	before := sc.Get(setting)
	if err := sc.Set(setting, value); err != nil {
		m.setErr(err)
		return nil
	}
	if sc.Get(setting) == before {
		// Nothing to change: no engine call, no "2m→2m" marker.
		m.setMsg(msgInfo, fmt.Sprintf("%s %s is %s already", sc.Name, setting, before))
		return nil
	}
	ch := engine.Change{Side: side, Setting: setting, Value: value}
	return m.enqueue(op{
		kind: opApply, side: side, setting: setting, value: value,
		run: func(c engine.Controller) error { return c.Apply(ch) },
		local: func(ps *pairState) {
			s := ps.cfg.Sides[side]
			if s.Set(setting, value) == nil {
				ps.cfg.Sides[side] = s
			}
		},
	})
}

func (m *Model) stepInt(side int, setting string, from, to int) tea.Cmd {
	if from == to {
		m.setMsg(msgInfo, fmt.Sprintf("%s %s is at its limit (%d)", m.cfg.Sides[side].Name, setting, from))
		return nil
	}
	return m.change(side, setting, strconv.Itoa(to))
}

func (m *Model) stepSize(side, from, to int) tea.Cmd {
	if from == to {
		m.setMsg(msgInfo, fmt.Sprintf("%s request size is at its limit (%s)", m.cfg.Sides[side].Name, units.FormatSize(int64(from))))
		return nil
	}
	return m.change(side, engine.SetRequestSize, units.FormatSize(int64(to)))
}

// gap shows the macOS/Linux difference in one view: A at macOS's 8 KiB,
// B at 2 MiB.
func (m *Model) gap() tea.Cmd {
	a := m.change(0, engine.SetSndBuf, "macos")
	if m.msg.kind == msgError {
		return a
	}
	b := m.change(1, engine.SetSndBuf, "2m")
	switch {
	case m.msg.kind == msgError:
	case a == nil && b == nil:
		m.setMsg(msgInfo, "gap: A is at macOS's 8k and B at 2m already — watch syscalls per 2 MiB")
	default:
		m.setMsg(msgInfo, "gap: A at macOS's 8k, B at 2m — watch syscalls per 2 MiB")
	}
	return tea.Batch(a, b)
}

func (m *Model) toggleMode() tea.Cmd {
	next := engine.ModeConcurrent
	if m.cfg.Mode == engine.ModeConcurrent {
		next = engine.ModeAlternate
	}
	return m.enqueue(op{
		kind: opMode, side: -1, value: next,
		run:   func(c engine.Controller) error { return c.SetMode(next) },
		local: func(ps *pairState) { ps.cfg.Mode = next },
	})
}

func (m *Model) togglePause(side int) tea.Cmd {
	p := !m.paused[side]
	return m.enqueue(op{
		kind: opPause, side: side, value: strconv.FormatBool(p),
		run:   func(c engine.Controller) error { return c.SetPaused(side, p) },
		local: func(ps *pairState) { ps.paused[side] = p },
	})
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
	switch kind {
	case inputSndBuf:
		m.input.Prompt = m.cfg.Sides[m.focus].Name + " sndbuf = "
		m.input.Placeholder = "64k, 2m, default or macos"
	case inputPresetName:
		m.input.Prompt = "save preset as: "
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
			side := m.focus
			if sc := m.cfg.Sides[side]; sc.Set(engine.SetSndBuf, v) == nil && sc.Get(engine.SetSndBuf) == m.cfg.Sides[side].Get(engine.SetSndBuf) {
				m.state = stNormal
				m.input.Blur()
				m.setMsg(msgInfo, fmt.Sprintf("%s sndbuf is %s already", sc.Name, sc.Get(engine.SetSndBuf)))
				return nil
			}
			ch := engine.Change{Side: side, Setting: engine.SetSndBuf, Value: v}
			m.inputBusy = true
			m.inputErr = ""
			return m.enqueue(op{
				kind: opExact, side: side, setting: engine.SetSndBuf, value: v,
				run: func(c engine.Controller) error { return c.Apply(ch) },
				local: func(ps *pairState) {
					s := ps.cfg.Sides[side]
					if s.Set(engine.SetSndBuf, v) == nil {
						ps.cfg.Sides[side] = s
					}
				},
			})
		}
		m.state = stNormal
		m.input.Blur()
		return m.save(v, false)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.inputErr = ""
	return cmd
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
	return m.enqueue(op{
		kind: kind, side: -1, name: name,
		run: func(c engine.Controller) error { return fn(name, c.Config()) },
	})
}
