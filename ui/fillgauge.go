package ui

import (
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
)

// The fill gauge of a side's panel: a bar of the bulk sender's send
// buffer, its fill in the last sample against its limit, and the shares
// of the last 2 s it was full and empty (model.Fill, sampled by the
// controller at 100 Hz). Who waited on whom reads off it: full, the
// sender waited for its reader; empty, the reader for the sender.

// recentFill is the fill of the panel's verdict figures: a running
// side's last 2 s of unchanged settings, a waiting side's last turn, as
// the engine's meter added them; the fill chart's legend shows the same.
func (p *panel) recentFill() model.Fill {
	if f := p.verdictFigures(); f != nil {
		return f.Fill()
	}
	return model.NoFill
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
// 37%", at most w cells, with what measured it where it fits ("· kernel",
// "· sampled: TCP", else "· k"); n/a when the fill is not measured.
func (p *panel) fillGauge(w int) string {
	st := p.com.styles
	fl := p.recentFill()
	if !fl.Known() {
		return p.val(na)
	}
	src := phrase.FillSourceShort(fl.Source, fl.Sampled)
	if src == "" {
		return p.fillShares(fl, w)
	}
	by := st.Dim.Render(" · " + src)
	short := st.Dim.Render("f") + fl.FullPct.Fixed(0) + st.Dim.Render(" e") + fl.EmptyPct.Fixed(0) + st.Dim.Render("%")
	for _, s := range []string{p.fillShares(fl, w-cellWidth(by)) + by, fillBar(p.currentShare(), 4) + " " + short + by, short + by} {
		if cellWidth(s) <= w {
			return s
		}
	}
	tiny := st.Dim.Render(" · " + phrase.FillSourceTiny(fl.Source))
	return p.fillShares(fl, w-cellWidth(tiny)) + tiny
}

// fillShares is the gauge without its source: a bar and the shares in
// words, at most w cells, or the shares alone where no bar fits.
func (p *panel) fillShares(fl model.Fill, w int) string {
	st := p.com.styles
	tail := st.Dim.Render(" full ") + fl.FullPct.Fixed(0) + "%" + st.Dim.Render(" empty ") + fl.EmptyPct.Fixed(0) + "%"
	tailW := cellWidth(tail)
	cells := min(max(w-tailW, 4), 10)
	if w-tailW < 4 {
		// too narrow for a bar: the shares alone
		return fl.FullPct.Fixed(0) + "%" + st.Dim.Render(" full ") + fl.EmptyPct.Fixed(0) + "%" + st.Dim.Render(" empty")
	}
	return fillBar(p.currentShare(), cells) + tail
}

// fillLabel is the narrow fill row's label: "fill", and the letter of
// what measured it ("fill k": the kernel; "fill s": sampled), which the
// row's value has no cell left for.
func (p *panel) fillLabel() string {
	if t := phrase.FillSourceTiny(p.recentFill().Source); t != "" {
		return "fill " + t
	}
	return "fill"
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
	// Labelled in as few cells as the unlabelled "42/45%" took: f full,
	// e empty, as the help's fill entry says.
	return fillBar(p.currentShare(), 4) + st.Dim.Render(" f") + fl.FullPct.Fixed(0) + st.Dim.Render(" e") + fl.EmptyPct.Fixed(0) + st.Dim.Render("%")
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

// fillWords are the pace row's words for who waited on whom, from the
// same verdict as its pace (phrase.WaitShort), "" when the fill
// is not measured.
func (p *panel) fillWords() string {
	if v, ok := p.verdict(); ok {
		return phrase.WaitShort(v)
	}
	return ""
}
