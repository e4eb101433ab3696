package ui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"nbdscope/model"
)

// shortKeys is the footer for the current state: the full form, then the
// form for a narrow screen (footer picks the first that fits).
func (m *Model) shortKeys() (full, narrow []key.Binding) {
	switch m.state {
	case stInput:
		return modalKeys{keyEnter, keyEsc}, nil
	case stConfirm:
		return modalKeys{keyYes, keyNo}, nil
	case stPicker:
		return modalKeys{keyEnter, keyFilter, keyMove, keyEsc}, nil
	case stHelp:
		if m.helpMore {
			return modalKeys{keyClose, keyHelpPage, keyScroll, m.keys.Quit}, nil
		}
		return modalKeys{keyClose, keyHelpPage, m.keys.Quit}, nil
	}
	k := m.keys
	terse := func(b key.Binding, keys, desc string) key.Binding {
		b.SetHelp(keys, desc)
		return b
	}
	var lead []key.Binding
	if m.panels[0].crash != nil || m.panels[1].crash != nil {
		lead = append(lead, terse(k.Restart, "!", "restart"))
	}
	// +/- and = act on one buffer (or two) of the focused side: the
	// footer names it, whatever k or a preset made it.
	bufs := m.panels[m.focus].keys(k.BufUp).Buffers
	var charts []key.Binding
	if m.charts.paging() {
		charts = append(charts, terse(k.Charts, "v", "more charts"))
	}
	pause := terse(k.Setting(model.SetPaused), "space", "pause")
	gap := terse(k.Gap, "g", "gap")
	tail := []key.Binding{terse(k.Presets, "p", "presets"), terse(k.Save, "s", "save preset+run"),
		terse(k.Help, "?", "help"), terse(k.Quit, "q", "quit")}
	full = append(append(append(lead, bufs, terse(k.NextSide, "tab/1/2", "side"), gap, pause), charts...),
		terse(k.Setting(model.SetConnections), "c/C", "conns −/+"),
		terse(k.Setting(model.SetRequestSize), "r/R", "req size ½/×2"),
		terse(k.Setting(model.SetInFlight), "d/D", "in flight ½/×2"))
	full = append(full, tail...)
	// Narrow: the README's two main keys (g, p) first, then the three
	// pairs in one (lowercase lowers, capital raises), then the keys the
	// footer drops first, from the end (save, charts, pause, side), help
	// and quit always last.
	narrow = append(append([]key.Binding{}, lead...), bufs, gap, tail[0],
		terse(k.Setting(model.SetConnections), "c/C r/R d/D", "−/+"), terse(k.NextSide, "tab", "side"), pause)
	narrow = append(append(narrow, charts...), tail[1:]...)
	return full, narrow
}

// footer is the short help, most useful keys first: the full form when
// it fits, else the narrow one with keys dropped from its end until it
// fits, but help and quit stay. It changes rarely: the last one is kept,
// by width and keys.
func (m *Model) footer(w int) string {
	full, narrow := m.shortKeys()
	var k strings.Builder
	k.WriteString(strconv.Itoa(w))
	for _, x := range append(full, narrow...) {
		k.WriteString("\x00" + x.Help().Key + "\x01" + x.Help().Desc)
	}
	if k.String() == m.footKey {
		return m.foot
	}
	hm := m.help
	hm.Width = 0
	b := full
	if s := hm.ShortHelpView(b); cellWidth(s) > w && narrow != nil {
		b = narrow
	}
	for {
		s := hm.ShortHelpView(b)
		if cellWidth(s) <= w || len(b) <= 3 {
			m.footKey, m.foot = k.String(), clip(s, w)
			return m.foot
		}
		b = append(b[:len(b)-3], b[len(b)-2:]...)
	}
}
