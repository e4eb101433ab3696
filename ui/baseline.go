package ui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/guptarohit/asciigraph"

	"nbdscope/model"
)

// A baseline is a saved run drawn faintly behind the live series (the `b`
// key), so that today's run can be seen against an earlier one. Its
// samples are aligned by time since the start of each run: the baseline's
// sample at T is drawn in the column of the live run's second T.

// RunItem is one entry of the baseline picker: a saved run.
type RunItem struct {
	Name   string
	Time   time.Time
	Preset string
	// Throughput is the run's summary throughput of sides A and B
	// (unknown when not recorded).
	Throughput [2]model.Figure
}

// Baseline series glyphs: dotted, light for A and heavy for B, distinct
// from the live sets (solid and dashed) when there is no colour.
var (
	charsBaseA = asciigraph.CharSet{Horizontal: "┈", VerticalLine: "╎", ArcDownRight: "·", ArcDownLeft: "·", ArcUpRight: "·", ArcUpLeft: "·", EndCap: "·", StartCap: "·"}
	charsBaseB = asciigraph.CharSet{Horizontal: "┉", VerticalLine: "╏", ArcDownRight: "•", ArcDownLeft: "•", ArcUpRight: "•", ArcUpLeft: "•", EndCap: "•", StartCap: "•"}
)

func baseGlyph(side int) string {
	if side == 0 {
		return "┈┈"
	}
	return "┉┉"
}

// baseline is a saved run's active samples, reduced to points and sorted
// by time, per side.
type baseline struct {
	name   string
	time   time.Time
	hist   [2]history
	maxDur float64 // the longest sample, to find the points a window touches
}

// newBaseline reduces a report. It reports false when the run has no
// active sample to draw.
func newBaseline(name string, rep model.Report) (*baseline, bool) {
	b := &baseline{name: name, time: rep.Time}
	rep = rep.WithStamps()
	var names [2]string
	for i := range names {
		names[i] = rep.Config.Sides[i].Name
		if names[i] == "" {
			names[i] = string(rune('A' + i))
		}
	}
	n := 0
	for _, s := range rep.Samples {
		if !s.Active || math.IsNaN(s.T) || math.IsInf(s.T, 0) {
			continue
		}
		i := s.Side.Index()
		if i < 0 {
			continue
		}
		p := pointOf(s)
		if math.IsInf(p.dur, 0) || p.dur > 3600 {
			p.dur = 0
		}
		b.hist[i].pts = append(b.hist[i].pts, p)
		b.maxDur = max(b.maxDur, p.dur)
		n++
	}
	for i := range b.hist {
		pts := b.hist[i].pts
		sort.SliceStable(pts, func(x, y int) bool { return pts[x].t < pts[y].t })
	}
	return b, n > 0
}

// in returns side i's points that touch [t0, t1]: a view of the sorted
// points, so that drawing a window of a long run stays cheap.
func (b *baseline) in(i int, t0, t1 float64) *history {
	pts := b.hist[i].pts
	lo := sort.Search(len(pts), func(k int) bool { return pts[k].t >= t0 })
	hi := sort.Search(len(pts), func(k int) bool { return pts[k].t > t1+b.maxDur })
	if hi < lo {
		hi = lo
	}
	return &history{pts: pts[lo:hi]}
}

// at returns side i's latest point at or before t (nil before the first).
func (b *baseline) at(i int, t float64) *point {
	pts := b.hist[i].pts
	k := sort.Search(len(pts), func(k int) bool { return pts[k].t > t })
	if k == 0 {
		return nil
	}
	return &pts[k-1]
}

// label is "NAME (2006-01-02)" for the header and messages.
func (b *baseline) label() string {
	if b.time.IsZero() {
		return b.name
	}
	return b.name + " (" + b.time.Local().Format("2006-01-02") + ")"
}

// Messages of the baseline picker.
type (
	runsMsg     = listMsg[RunItem]
	baselineMsg struct {
		name string
		rep  model.Report
		err  error
	}
)

// runPickItem is a saved run in the picker; clear is the "clear baseline"
// entry.
type runPickItem struct {
	r     RunItem
	clear string // the baseline it clears
}

func (i runPickItem) Title() string {
	if i.clear != "" {
		return "clear baseline"
	}
	return i.r.Name
}

func (i runPickItem) Description() string {
	if i.clear != "" {
		return "stop drawing " + i.clear
	}
	var parts []string
	if !i.r.Time.IsZero() {
		parts = append(parts, i.r.Time.Local().Format("2006-01-02 15:04"))
	}
	parts = append(parts, "A "+rate(i.r.Throughput[0]), "B "+rate(i.r.Throughput[1]))
	if i.r.Preset != "" {
		parts = append(parts, "preset "+i.r.Preset)
	}
	return strings.Join(parts, " · ")
}

func (i runPickItem) FilterValue() string {
	if i.clear != "" {
		return "clear baseline"
	}
	return i.r.Name
}

// runKind is the picker of saved runs to draw as the baseline (the `b`
// key).
var runKind = pickerKind{
	runs:  true,
	title: "saved runs — enter draws one as the baseline",
	one:   "run", many: "runs",
	loading: "loading saved runs…",
	toggle:  key.NewBinding(key.WithKeys("b")),
}

func (m *Model) openBaselinePicker() tea.Cmd {
	var l func() ([]RunItem, error)
	if m.opts.LoadRun != nil { // a run listed must be one that can be drawn
		l = m.opts.LoadRuns
	}
	return m.openPickerOf(runKind, m.pickRun, listing(l), "saved runs not available")
}

func (m *Model) onRuns(msg runsMsg) {
	if m.state != stPicker || !m.picker.runs {
		return
	}
	if msg.err != nil {
		// One broken run file does not hide the others.
		m.setMsg(msgWarn, "▲ runs: "+msg.err.Error())
	}
	if len(msg.items) == 0 && m.charts.base == nil {
		m.closePicker()
		if msg.err != nil {
			m.setErr(fmt.Errorf("runs: %w", msg.err))
		} else {
			m.setMsg(msgInfo, "no saved runs yet: s saves the configuration and the run")
		}
		return
	}
	var items []list.Item
	sel := 0
	if b := m.charts.base; b != nil {
		items = append(items, runPickItem{clear: b.name})
	}
	for _, it := range msg.items {
		if b := m.charts.base; b != nil && it.Name == b.name {
			sel = len(items)
		}
		items = append(items, runPickItem{r: it})
	}
	m.picker.show(items, sel)
}

// pickRun is enter on a saved run (or on "clear baseline").
func (m *Model) pickRun(sel list.Item) tea.Cmd {
	it, ok := sel.(runPickItem)
	if !ok {
		return nil
	}
	return m.chooseRun(it)
}

// chooseRun loads the picked run (or clears the baseline).
func (m *Model) chooseRun(it runPickItem) tea.Cmd {
	if it.clear != "" {
		m.clearBaseline()
		return nil
	}
	name, load := it.r.Name, m.opts.LoadRun
	m.setMsg(msgInfo, "loading run "+name+"…")
	return func() tea.Msg {
		rep, err := load(name)
		return baselineMsg{name: name, rep: rep, err: err}
	}
}

func (m *Model) onBaseline(msg baselineMsg) {
	if msg.err != nil {
		m.setErr(fmt.Errorf("baseline %s: %w", msg.name, msg.err))
		return
	}
	b, ok := newBaseline(msg.name, msg.rep)
	if !ok {
		m.setMsg(msgWarn, "▲ run "+msg.name+" has no active samples to draw")
		return
	}
	m.charts.base = b
	m.setMsg(msgInfo, "baseline: "+b.label()+" — dotted behind the live series · B clears")
}

func (m *Model) clearBaseline() {
	if m.charts.base == nil {
		m.setMsg(msgInfo, "no baseline shown: b picks a saved run")
		return
	}
	m.setMsg(msgInfo, "baseline "+m.charts.base.name+" cleared")
	m.charts.base = nil
}
