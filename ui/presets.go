package ui

import (
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
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

// presetKind is the picker of presets (the `p` key).
var presetKind = pickerKind{
	title: "presets — enter applies to the running pair",
	one:   "preset", many: "presets",
	loading: "loading presets…",
	toggle:  key.NewBinding(key.WithKeys("p")),
}

func (m *Model) openPicker() tea.Cmd {
	return m.openPickerOf(presetKind, m.choosePreset, listing(m.opts.LoadPresets), "presets not available")
}

func (m *Model) onPresets(msg presetsMsg) {
	if m.state != stPicker || m.picker.runs {
		return
	}
	if msg.err != nil {
		// Some presets may still have loaded (one bad file does not hide
		// the others): show them, and the error.
		m.setMsg(msgWarn, "▲ presets: "+msg.err.Error())
		if len(msg.items) == 0 {
			m.closePicker()
			m.setErr(fmt.Errorf("presets: %w", msg.err))
			return
		}
	}
	if len(msg.items) == 0 && msg.err == nil {
		m.closePicker()
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
	m.picker.show(items, sel)
}

// choosePreset is enter on a preset: it applies it.
func (m *Model) choosePreset(sel list.Item) tea.Cmd {
	it, ok := sel.(pickItem)
	if !ok {
		return nil
	}
	return m.applyPreset(it.p)
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
