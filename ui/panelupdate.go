package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/model"
)

// The panel is a component, as the picker is (after soft-serve's
// pkg/ui/common): it keeps its own state and changes it in its own
// Update, from the engine's updates for its side and from what the root
// model tells it of the side (panelState); the root never sets its
// fields. It shows what the engine's meter computed and adds nothing
// itself (verdictFigures).

// newPanel is side i's panel, before anything of the side is known.
func newPanel(com *common, i int) panel {
	return panel{com: com, idx: i, stuckFrom: -1}
}

// panelState is what the root model knows of a side that its panel
// shows: its configuration with the queued changes on top, the buffers
// the keys step, whether it is paused, has a change on its way, has the
// focus, and whether the sides compete for cores (no pace is claimed).
type panelState struct {
	cfg                               model.SideConfig
	stepped                           []*model.Setting
	paused, pending, focused, compete bool
}

// panelChanged says a change of the side took effect at t (run time).
type panelChanged struct{ t float64 }

// panelRestarted says the side was restarted: its crash is over.
type panelRestarted struct{}

// panelFocus says whether the panel has the focus.
type panelFocus bool

// panelWarnOutside says whether the panel's warnings are drawn below
// the panels, the width of the screen (two narrow panels side by side).
type panelWarnOutside bool

// Update takes a message for the panel: an engine update of its side
// (a sample, a warning, a crash), or the root's word on its state.
func (p panel) Update(msg tea.Msg) (panel, tea.Cmd) {
	switch msg := msg.(type) {
	case model.Update:
		p.onUpdate(msg)
	case panelState:
		p.cfg, p.stepped, p.paused, p.pending, p.focused, p.compete =
			msg.cfg, msg.stepped, msg.paused, msg.pending, msg.focused, msg.compete
	case panelChanged:
		p.changed(msg.t)
	case panelRestarted:
		p.crash = nil
	case panelFocus:
		p.focused = bool(msg)
	case panelWarnOutside:
		p.warnOutside = bool(msg)
	default:
		return p, nil
	}
	p.rows = nil // the state changed: the rows are drawn again
	return p, nil
}

// onUpdate takes an engine update of the panel's side.
func (p *panel) onUpdate(u model.Update) {
	switch {
	case u.Sample != nil:
		p.observe(*u.Sample)
	case u.Crash != nil:
		c := *u.Crash
		p.crash = &c
	case u.Warning != nil:
		w := *u.Warning
		if w.Kind == model.WarnClamp {
			p.clamp = &w
		} else {
			p.warn = &w
		}
	}
}
