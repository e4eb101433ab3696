package ui

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/engine"
	"nbdscope/model"
)

// liveSettings are the side settings ApplyConfig changes on a running
// side, in the table's order but with those that restart the side last.
func liveSettings() []*model.Setting {
	var now, restart []*model.Setting
	for _, st := range model.Settings() {
		switch {
		case !st.InSideConfig() || !st.Live():
		case st.Where == model.AtRestart:
			restart = append(restart, st)
		default:
			now = append(now, st)
		}
	}
	return append(now, restart...)
}

// ApplyConfig changes a running pair to cfg, setting by setting, and its
// mode. Target, backend and size cannot change while a side runs; they are
// reported in the error (after everything else was applied).
func ApplyConfig(ctrl engine.Controller, cfg model.Config) error {
	cur := ctrl.Config()
	var errs []error
	for i := range cfg.Sides {
		have, want := cur.Sides[i], cfg.Sides[i]
		if have.Target != want.Target || have.Backend != want.Backend || have.Size != want.Size {
			errs = append(errs, fmt.Errorf("side %s: target, backend and size apply only to a new run", have.Name))
		}
		for _, st := range liveSettings() {
			if st.Spawned && want.Target != "" {
				continue
			}
			if v := want.Value(st); v != have.Value(st) {
				if err := ctrl.Apply(model.Change{Side: i, Setting: st, Value: v}); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if cfg.Mode != "" && cfg.Mode != cur.Mode {
		if err := ctrl.SetMode(cfg.Mode); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// applyLocal is ApplyConfig's effect on what the panels show.
func applyLocal(ps *pairState, cfg model.Config) {
	for i := range cfg.Sides {
		for _, st := range liveSettings() {
			sc := ps.Cfg.Sides[i]
			if sc.SetValue(st, cfg.Sides[i].Value(st)) == nil {
				ps.Cfg.Sides[i] = sc
			}
		}
	}
	if cfg.Mode != "" {
		ps.Cfg.Mode = cfg.Mode
	}
}

// pickItem is a PresetItem in the list.
type pickItem struct{ p PresetItem }

func (i pickItem) Title() string {
	if i.p.BuiltIn {
		return i.p.Name + " (built-in)"
	}
	return i.p.Name
}
func (i pickItem) Description() string { return i.p.Description }
func (i pickItem) FilterValue() string { return i.p.Name }

// picker is the preset list shown in the chart area; with runs set, the
// list of saved runs to draw as a baseline (the `b` key).
type picker struct {
	com     *common
	list    list.Model
	loading bool
	runs    bool
	// descLines is the lines each entry's description takes now.
	descLines int
}

func newPicker(com *common) picker {
	d := wrapDelegate{list.NewDefaultDelegate(), 1}
	l := list.New(nil, d, 0, 0)
	l.SetShowHelp(false)
	l.DisableQuitKeybindings()
	p := picker{com: com, list: l, descLines: 1}
	p.setRuns(false)
	return p
}

// setRuns switches the picker between presets and saved runs.
func (p *picker) setRuns(runs bool) {
	p.runs = runs
	if runs {
		p.list.Title = "saved runs — enter draws one as the baseline"
		p.list.SetStatusBarItemName("run", "runs")
		return
	}
	p.list.Title = "presets — enter applies to the running pair"
	p.list.SetStatusBarItemName("preset", "presets")
}

// SetSize sizes the list, and its entries to their descriptions'
// lines at that width.
func (p *picker) SetSize(w, h int) {
	p.list.SetSize(max(w, 0), max(h, 0))
	lines := 1
	for _, it := range p.list.Items() {
		if di, ok := it.(list.DefaultItem); ok {
			lines = max(lines, len(wrap(di.Description(), descWidth(w), 0)))
		}
	}
	lines = min(lines, maxDescLines)
	if lines != p.descLines {
		d := wrapDelegate{list.NewDefaultDelegate(), lines}
		d.SetHeight(1 + lines)
		p.list.SetDelegate(d)
		p.descLines = lines
	}
}

// maxDescLines is how many lines a picker entry's description may take.
const maxDescLines = 3

// descWidth is the width of a description in a list w cells wide (the
// default delegate's two cells of padding or border taken off).
func descWidth(w int) int { return max(w-2, 10) }

// wrapDelegate is the list's default delegate with each description
// word-wrapped onto the entry's lines rather than cut to one.
type wrapDelegate struct {
	list.DefaultDelegate
	lines int
}

func (d wrapDelegate) Render(w io.Writer, m list.Model, index int, item list.Item) {
	if it, ok := item.(list.DefaultItem); ok {
		item = wrappedItem{it, strings.Join(wrap(it.Description(), descWidth(m.Width()), d.lines), "\n")}
	}
	d.DefaultDelegate.Render(w, m, index, item)
}

// wrappedItem is an entry with its description wrapped.
type wrappedItem struct {
	list.DefaultItem
	desc string
}

func (i wrappedItem) Description() string { return i.desc }

func (p *picker) View() string {
	if p.loading && p.runs {
		return p.com.styles.Dim.Render("loading saved runs…")
	}
	if p.loading {
		return p.com.styles.Dim.Render("loading presets…")
	}
	return p.list.View()
}

func (m *Model) openPicker() tea.Cmd {
	if m.opts.LoadPresets == nil {
		m.setMsg(msgWarn, "presets not available")
		return nil
	}
	m.state = stPicker
	m.picker.setRuns(false)
	m.picker.loading = true
	load := m.opts.LoadPresets
	return func() tea.Msg {
		items, err := load()
		return presetsMsg{items, err}
	}
}

func (m *Model) onPresets(msg presetsMsg) {
	if m.state != stPicker || m.picker.runs {
		return
	}
	m.picker.loading = false
	if msg.err != nil {
		// Some presets may still have loaded (one bad file does not hide
		// the others): show them, and the error.
		m.setMsg(msgWarn, "▲ presets: "+msg.err.Error())
		if len(msg.items) == 0 {
			m.state = stNormal
			m.setErr(fmt.Errorf("presets: %w", msg.err))
			return
		}
	}
	if len(msg.items) == 0 && msg.err == nil {
		m.state = stNormal
		m.setMsg(msgInfo, "no presets yet: s saves the current configuration")
		return
	}
	items := make([]list.Item, len(msg.items))
	sel := 0
	for i, it := range msg.items {
		items[i] = pickItem{it}
		if it.Name == m.preset {
			sel = i
		}
	}
	m.picker.list.ResetFilter()
	m.picker.list.SetItems(items)
	m.picker.list.Select(sel)
}

func (m *Model) pickerKey(k tea.KeyMsg) tea.Cmd {
	if m.picker.loading {
		if k.String() == "esc" || k.String() == "q" || (m.picker.runs && k.String() == "b") {
			m.state = stNormal
		}
		return nil
	}
	if m.picker.list.SettingFilter() {
		var cmd tea.Cmd
		m.picker.list, cmd = m.picker.list.Update(k)
		return cmd
	}
	toggle := "p"
	if m.picker.runs {
		toggle = "b"
	}
	switch k.String() {
	case "esc", "q", toggle:
		if m.picker.list.IsFiltered() && k.String() == "esc" {
			break // esc clears the filter first
		}
		m.state = stNormal
		return nil
	case "enter":
		sel := m.picker.list.SelectedItem()
		m.state = stNormal
		if it, ok := sel.(runPickItem); ok {
			return m.chooseRun(it)
		}
		it, ok := sel.(pickItem)
		if !ok {
			return nil
		}
		return m.applyPreset(it.p)
	}
	var cmd tea.Cmd
	m.picker.list, cmd = m.picker.list.Update(k)
	return cmd
}

func (m *Model) applyPreset(p PresetItem) tea.Cmd {
	hook := m.opts.ApplyPreset
	// A preset starts over: + - = act on each side's sender's send
	// buffer again, the one its description speaks of, not one k picked
	// for the configuration before.
	m.bufTarget = [2]bufTarget{}
	m.setMsg(msgInfo, "applying preset "+p.Name+"…")
	return m.enqueue(op{
		kind: opPreset, side: -1, name: p.Name,
		run: func(c engine.Controller) error {
			if hook != nil {
				return hook(p)
			}
			return ApplyConfig(c, p.Config)
		},
		local: func(ps *pairState) { applyLocal(ps, p.Config) },
	})
}
