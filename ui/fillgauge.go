package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
	"nbdscope/phrase"
)

// The fill gauge of a side's panel: a bar of the bulk sender's send
// buffer, its fill in the last sample against its limit, and the shares
// of the last 2 s it was full and empty (model.Fill, sampled by the
// controller at 200 Hz). Who waited on whom reads off it: full, the
// sender waited for its reader; empty, the reader for the sender.

// recentFill is the fill of the panel's recent samples (the last 2 s of
// unchanged settings), weighted by their samples.
func (p *panel) recentFill() model.Fill {
	var fl model.Fill
	for i := range p.recent {
		fl = fl.Add(p.recent[i].Fill())
	}
	return fl
}

// fillBar is a bar of cells cells, share of it filled.
func fillBar(share model.Figure, cells int) string {
	if !share.Known() || cells <= 0 {
		return strings.Repeat("·", max(cells, 0))
	}
	n := int(float64(share)*float64(cells) + 0.5)
	n = min(max(n, 0), cells)
	return strings.Repeat("█", n) + strings.Repeat("░", cells-n)
}

// fillGauge is the gauge's one line: "████░░░░ 54% · full 61% · empty
// 37%", at most w cells; n/a when the fill is not measured.
func (p *panel) fillGauge(w int) string {
	st := p.com.styles
	fl := p.recentFill()
	if !fl.Known() {
		return p.val(na)
	}
	now := p.currentShare()
	tail := st.Dim.Render(" full ") + fl.FullPct.Fixed(0) + "%" + st.Dim.Render(" empty ") + fl.EmptyPct.Fixed(0) + "%"
	tailW := ansi.StringWidth(tail)
	cells := min(max(w-tailW, 4), 10)
	if w-tailW < 4 {
		// too narrow for a bar: the shares alone
		return fl.FullPct.Fixed(0) + "%" + st.Dim.Render(" full ") + fl.EmptyPct.Fixed(0) + "%" + st.Dim.Render(" empty")
	}
	return fillBar(now, cells) + tail
}

// fillShort is the gauge's one-line form in a narrow panel (80x24), which
// shares its line with the latency: "██████ 97/1%", full/empty percent of
// the last 2 s.
func (p *panel) fillShort() string {
	st := p.com.styles
	fl := p.recentFill()
	if !fl.Known() {
		return st.Dim.Render("buf ") + p.val(na)
	}
	return fillBar(p.currentShare(), 6) + " " + fl.FullPct.Fixed(0) + "/" + fl.EmptyPct.Fixed(0) + st.Dim.Render("%")
}

// currentShare is the shown figures' fill against its limit: the last
// active sample's, or a waiting side's last turn's.
func (p *panel) currentShare() model.Figure {
	if a, _ := p.shown(); a != nil {
		if f := a.Fill(); f.Known() && f.Limit > 0 {
			return model.Figure(min(1, float64(f.Bytes)/float64(f.Limit)))
		}
	}
	return model.Unknown
}

// fillWords are the pace row's words for who waited on whom
// (phrase.FillShort), "" when the fill is not measured.
func (p *panel) fillWords() string {
	fl := p.keysFlow()
	if a := p.lastActive; a != nil {
		fl = a.Direction()
	}
	return phrase.FillShort(p.recentFill(), fl)
}
