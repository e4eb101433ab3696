package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/model"
)

// The panel is a component, as the picker is (after soft-serve's
// pkg/ui/common): it keeps its own state and changes it in its own
// Update, from the engine's updates for its side and from what the root
// model tells it of the side (panelState); the root never sets its
// fields. It shows what the engine's meter computed and adds nothing
// itself (verdictFigures).

// steppedFor is the buffers the keys act on when k made them target t:
// the bulk sender's send buffers (a real client's by which way it moved
// its data), or the one k picked.
func (p *panel) steppedFor(t bufTarget) []*model.Setting {
	if t != targetSender {
		return model.BufferSettings()[t-1 : t]
	}
	return p.senderBuffers()
}

// panelKeyMap is the keys that act on the panel's side while it has the
// focus, named by what they act on now: +, - and = step the buffers the
// panel names on its first line (stepped). The root model handles them
// (a change goes through its queue); the footer shows the focused
// panel's.
type panelKeyMap struct {
	Buffers key.Binding
}

// keys is the panel's key map, from the buffers it steps now; up is the
// root's binding of the step key.
func (p *panel) keys(up key.Binding) panelKeyMap {
	up.SetHelp("+/-/=", p.steppedShort())
	return panelKeyMap{Buffers: up}
}

// ShortHelp is the panel's keys in the footer.
func (k panelKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Buffers} }

// steppedShort names what the buffer keys act on, in the footer's few
// words, as the panel's first line names it: "sndbuf" (the server's),
// "cli sndbuf", "cli rcvbuf", "both sndbufs" (a mixed workload's server
// and client).
func (p *panel) steppedShort() string {
	sts := p.stepped
	switch {
	case len(sts) > 1:
		return "both sndbufs"
	case len(sts) == 0 || sts[0] == model.BufferSettings()[0]:
		return "sndbuf"
	}
	return shortLabel.Replace(sts[0].Label)
}

var shortLabel = strings.NewReplacer("server ", "srv ", "client ", "cli ")

// newPanel is side i's panel, before anything of the side is known.
func newPanel(com *common, i int) panel {
	return panel{com: com, idx: i, stuckFrom: -1}
}

// panelState is what the root model knows of a side that its panel
// shows: its configuration with the queued changes on top, what k made
// the buffer keys act on, whether it is paused, has a change on its way,
// has the focus, and whether the sides compete for cores (no pace is
// claimed).
type panelState struct {
	cfg                               model.SideConfig
	target                            bufTarget
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
		p.cfg, p.paused, p.pending, p.focused, p.compete = msg.cfg, msg.paused, msg.pending, msg.focused, msg.compete
		p.runner = runnerOf(model.StampOf(msg.cfg))
		p.stepped = p.steppedFor(msg.target) // of the configuration just taken
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
