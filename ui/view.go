package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"nbdscope/model"
	"nbdscope/phrase"
)

// render lays the screen out for the current size and draws it. Every
// line is cut to the terminal's width and the screen to its height.
// Layout and drawing are two steps: layout sizes the components and
// decides everything a frame depends on (the panels' height, the chart
// area, whether the change strip shows, the footer); the drawing
// functions after it only read.
func (m *Model) render() string {
	w, h := m.com.width, m.com.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if m.isTooSmall() {
		return m.tooSmall()
	}
	return m.draw(m.layout(w, h))
}

// isTooSmall tells whether the screen is the too-small notice, which
// shows nothing but "q quits": the keys then do nothing else (onKey).
func (m *Model) isTooSmall() bool {
	w, h := m.com.width, m.com.height
	return w > 0 && h > 0 && (w < minWidth || h < minHeight)
}

// panelMode is how the panels are shown.
type panelMode int

const (
	panelsHidden  panelMode = iota // help and the picker take their room
	panelsBoth                     // side by side
	panelsFocused                  // the focused one, and a line about the other
)

// screen is one frame's layout, decided before anything is drawn.
type screen struct {
	w, h   int
	header int       // its height
	banner []string  // a line for each crashed side
	warns  []string  // the sides' warnings, below narrow panels
	panels panelMode // how the panels show
	panelH int       // the panels' height, their borders included
	area   int       // the height left for the charts, help or picker
	charts chartPlan // what the charts draw (when they are shown)
	help   []string  // the help's lines, scrolled to fit (stHelp)
	strip  bool      // the charts show the change strip
	status string    // the status line
	footer string    // the short help, or the prompt's error
}

// layout decides the frame: it brings the components up to date with the
// model and gives each its size.
func (m *Model) layout(w, h int) screen {
	sc := screen{w: w, h: h, header: 2}
	if h < 16 {
		sc.header = 1
	}
	mark := m.macOSMark()
	if mark != nil {
		sc.header++ // the mark's own line, for as long as it is in force
	}
	m.layoutHeader(w, sc.header, mark)
	sc.banner = m.banners(w)
	sc.warns = m.warningLines(w)
	// The status line and the footer take more lines when a message
	// needs them (never cut): as many as the message would take with no
	// change strip to show an event instead.
	m.layoutInput(w)
	msgLines := lineCount(m.statusLine(w, false)) + lineCount(m.footerLines(w))
	fixed := sc.header + msgLines + len(sc.banner) + len(sc.warns)
	sc.panels, sc.panelH = m.layoutPanels(w, h, fixed)
	sc.area = max(h-fixed-sc.panelH, 0)
	switch m.state {
	case stHelp:
		sc.help = m.layoutHelp(w, sc.area)
	case stPicker:
		m.picker.SetSize(w, sc.area)
	default:
		m.charts.SetSize(w, sc.area)
		sc.charts = m.charts.plan()
		sc.strip = sc.charts.strip
	}
	m.help.Width = w
	sc.status = m.statusLine(w, sc.strip)
	sc.footer = m.footerLines(w)
	if n := msgLines - lineCount(sc.footer) - lineCount(sc.status); n > 0 {
		sc.status += strings.Repeat("\n", n) // an event the strip shows: keep the rows laid out
	}
	return sc
}

// renderLines styles each line on its own (lipgloss would pad a block's
// lines to one width) and joins them.
func renderLines(st Style, lines []string) string {
	for i, l := range lines {
		lines[i] = st.Render(l)
	}
	return strings.Join(lines, "\n")
}

// lineCount is how many lines s has (an empty s is one: a blank line).
func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

// layoutInput gives the prompt's field the width left of the line, so a
// long value scrolls in it instead of being cut.
func (m *Model) layoutInput(w int) {
	fw := w - len("  applying…") - 1
	if m.input.Value() != "" {
		// (An empty field's placeholder counts the prompt in its width
		// itself.)
		fw -= cellWidth(m.input.Prompt)
	}
	m.input.Width = max(fw, 8)
}

// footerLines is the footer: the short help, or a prompt's error, which
// takes the footer's line and more if it needs them.
func (m *Model) footerLines(w int) string {
	if m.state == stInput && m.inputErr != "" {
		return renderLines(m.com.styles.Error, wrap("✗ "+m.inputErr, w, maxMsgLines))
	}
	return m.footer(w)
}

// maxMsgLines is how many lines a message, a prompt's error or a crash's
// stderr may take: a sentence of an error and its fix fits in three of 80
// columns.
const maxMsgLines = 3

// macOSMark is the mark's forms while a side runs at macOS's buffer on
// this kernel (model.MacOSEmulationNow decides), nil otherwise.
func (m *Model) macOSMark() []string {
	if e := model.MacOSEmulationNow(m.com.facts, m.cfg); e != nil {
		return phrase.MacOSEmulationForms(*e)
	}
	return nil
}

// layoutHeader brings the header up to date, h lines high, with the
// macOS mark's forms (nil for none).
func (m *Model) layoutHeader(w, h int, mark []string) {
	hd := &m.header
	hd.SetSize(w, h)
	hd.macOS = mark
	hd.mode = string(m.cfg.Mode)
	hd.preset = m.preset
	hd.modified = m.preset != "" && (m.cfg.Sides != m.baseCfg.Sides || m.cfg.Mode != m.baseCfg.Mode)
	hd.elapsed = m.elapsed
	hd.own = m.own.shown
	hd.baseline, hd.baseName = "", ""
	if b := m.charts.base; b != nil {
		hd.baseline, hd.baseName = b.label(), b.name
	}
	switch {
	case m.quitting:
		hd.state = "stopping…"
	case m.done:
		hd.state = "finished"
	default:
		hd.state = "running"
	}
}

// banners is a line for each crashed side, with the key that restarts it.
func (m *Model) banners(w int) []string {
	st := m.com.styles
	var banner []string
	for i := range m.panels {
		if c := m.panels[i].crash; c != nil {
			b := st.Error.Render(fmt.Sprintf("✗ %s %s crashed (%s)", m.cfg.Sides[i].Name, c.Role, c.Status))
			key := st.Key.Render("!") + st.KeyDesc.Render(" restart "+m.cfg.Sides[i].Name)
			l := lastLine(c.Stderr)
			if one := b + st.Dim.Render(" — ") + l; l == "" || cellWidth(one)+1+cellWidth(key) <= w {
				if l == "" {
					one = b
				}
				banner = append(banner, spread(one, key, w))
				continue
			}
			// Its stderr's last line under it, whole.
			banner = append(banner, spread(b, key, w))
			for _, x := range wrap(l, w-2, maxMsgLines) {
				banner = append(banner, "  "+x)
			}
		}
	}
	return banner
}

// warnsOutside reports whether the sides' warnings go below the panels,
// the screen's width, rather than in them: when two narrow panels stand
// side by side, half the width would take a warning and its fix twice
// the rows (and cut the panels' figures short of room).
func (m *Model) warnsOutside(w int) bool {
	return m.state != stHelp && m.state != stPicker && w >= 60 && w/2-4 < panelWideInner
}

// warningLines are the sides' warnings at the screen's width, when they
// go below the panels.
func (m *Model) warningLines(w int) []string {
	out := m.warnsOutside(w)
	var lines []string
	for i := range m.panels {
		m.panels[i], _ = m.panels[i].Update(panelWarnOutside(out))
		if !out {
			continue
		}
		p := &m.panels[i]
		lines = append(lines, p.warningRows(p.data().warnings, w)...)
	}
	return lines
}

// layoutPanels sizes the panels: side by side when there is room, else
// the focused one and a line about the other; they leave the charts at
// least a chart's room. It returns how they show and their height.
func (m *Model) layoutPanels(w, h, fixed int) (panelMode, int) {
	for i := range m.panels {
		// The focus may have moved, the state changed, since the last frame.
		m.panels[i], _ = m.panels[i].Update(panelFocus(i == m.focus))
	}
	switch {
	case m.state == stHelp || m.state == stPicker:
		return panelsHidden, 0
	case w >= 60:
		lw := w / 2
		m.panels[0].SetSize(lw, 0)
		m.panels[1].SetSize(w-lw, 0)
		ph := max(m.panels[0].naturalHeight(), m.panels[1].naturalHeight())
		ph = min(ph, max(h-fixed-minChartLines-2, 4))
		m.panels[0].SetSize(lw, ph)
		m.panels[1].SetSize(w-lw, ph)
		return panelsBoth, ph
	}
	f := &m.panels[m.focus]
	f.SetSize(w, 0)
	ph := min(f.naturalHeight(), max(h-fixed-1-minChartLines-2, 4))
	f.SetSize(w, ph)
	return panelsFocused, ph + 1
}

// draw draws a frame laid out by layout.
func (m *Model) draw(sc screen) string {
	parts := []string{m.header.View()}
	switch sc.panels {
	case panelsBoth:
		parts = append(parts, lipgloss.JoinHorizontal(lipgloss.Top, m.panels[0].View(), m.panels[1].View()))
	case panelsFocused:
		parts = append(parts, m.panels[m.focus].View()+"\n"+m.otherLine(1-m.focus, sc.w))
	}
	if len(sc.warns) > 0 {
		parts = append(parts, strings.Join(sc.warns, "\n"))
	}
	if len(sc.banner) > 0 {
		parts = append(parts, strings.Join(sc.banner, "\n"))
	}
	if sc.area > 0 {
		parts = append(parts, padLines(clipLines(m.centerView(sc), sc.w, sc.area), sc.area))
	}
	parts = append(parts, sc.status, sc.footer)
	return clipLines(strings.Join(parts, "\n"), sc.w, sc.h)
}

// centerView is the chart area: the charts, the help or the preset picker.
func (m *Model) centerView(sc screen) string {
	switch m.state {
	case stHelp:
		return strings.Join(sc.help, "\n")
	case stPicker:
		return m.picker.View()
	}
	return m.charts.draw(sc.charts)
}

// padLines makes s exactly n lines.
func padLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// otherLine sums up the side not shown on a narrow terminal.
func (m *Model) otherLine(i, w int) string {
	st := m.com.styles
	p := &m.panels[i]
	s := st.Side[i].Bold(true).Render(m.cfg.Sides[i].Name) + " " + p.status(false)
	if a, _ := p.shown(); a != nil {
		s += "  " + rate(a.ThroughputBps) + " · " + fig(a.ReceiverCallsPer2MiB()) + " calls/2MiB"
	}
	return spread(s, st.Dim.Render("tab ⇄"), w)
}

// statusLine is the prompt, the latest message, or a hint. An engine
// event's message is left to the change strip when the charts show it.
func (m *Model) statusLine(w int, strip bool) string {
	st := m.com.styles
	switch m.state {
	case stInput:
		s := m.input.View()
		if m.inputBusy {
			s += st.Dim.Render("  applying…")
		}
		return clip(s, w)
	case stConfirm:
		return clip(st.Warn.Render(fmt.Sprintf("preset %q exists — overwrite it? ", m.confirmName))+st.Key.Render("y/n"), w)
	}
	lines := func(style Style) string {
		return renderLines(style, wrap(m.msg.text, w, maxMsgLines))
	}
	switch m.msg.kind {
	case msgError:
		return lines(st.Error)
	case msgWarn:
		return lines(st.Warn)
	case msgInfo:
		return lines(st.Info)
	case msgEvent, msgRun:
		if !strip || m.state != stNormal {
			return lines(Style{})
		}
	}
	if m.done {
		return clip(st.Dim.Render("the run ended — q quits"), w)
	}
	if m.sidesCompete() {
		return renderLines(st.Warn, wrap(fmt.Sprintf("hint: %d cores — in concurrent mode the sides compete for CPU; alternate (m) is fairer", m.com.facts.Cores), w, 2))
	}
	return ""
}

func (m *Model) tooSmall() string {
	st := m.com.styles
	lines := []string{
		st.Brand.Render("nbdscope"),
		fmt.Sprintf("terminal too small: %d×%d", m.com.width, m.com.height),
		fmt.Sprintf("needs at least %d×%d", minWidth, minHeight),
		st.Dim.Render("q quits"),
	}
	return clipLines(strings.Join(lines, "\n"), m.com.width, m.com.height)
}

// kStops are the buffers k steps through after the sender's, in its
// order ("server sndbuf, client sndbuf, …"): the settings table's.
func kStops() string {
	var labels []string
	for _, st := range model.BufferSettings() {
		labels = append(labels, st.Label)
	}
	return strings.Join(labels, ", ")
}

// figureHelp explains every figure, in the engine's definitions.
var figureHelp = [][2]string{
	{"throughput", "payload bytes completed per second (READ data received, WRITE data acknowledged), GiB/s or MiB/s"},
	{"calls/2MiB", "receive syscalls (read/recvmsg) of the process that receives the bulk data — the client for reads, the server for writes — per 2 MiB of payload, counted on this machine as the side runs. Each sample uses the workload it was measured under, so after w the receiver switches when the change takes effect"},
	{"  series", seriesCalls},
	{hereLabel, hereCalls},
	{"send calls", "send syscalls (write/writev) of the process that sends the bulk data, per 2 MiB — the server for reads, the client for writes. For writes this is the figure the client's send buffer moves (shown bold, and dashed \"snd\" in the syscalls chart): the server drains each chunk as it arrives, so its receive calls show the reader's pace, not the buffer"},
	{"EAGAIN", "by direction, per 2 MiB: recv = the receiver's receive calls that found no data yet, send = the sender's send calls that found the buffer full. Counted apart from the calls; strace -c counts both as read or write"},
	{"wake/2MiB", "voluntary context switches (ru_nvcsw) of client and server per 2 MiB: a sleep and a wake-up each time a buffer fills or empties (v: chart)"},
	{"faults/2MiB", "minor page faults (ru_minflt) of client and server per 2 MiB: near 0 with warm buffers, up to 512 when each request faults a fresh one in"},
	{"cpu", "user+system time of the client and the server process (getrusage), per second the side's load ran (in alternate mode, its turns): cores busy, and CPU seconds per GiB of payload"},
	{"time", "client's and server's busiest thread over the last 2 s, one core wide: █ on a CPU, ▓ waiting for one (schedstat), ░ asleep; % the longer wait (20%+: CPUs contended)"},
	{"sndbuf", "requested → effective socket buffer. The panel's first line is the one + - = step: the bulk sender's send buffer — the server's SO_SNDBUF for reads, the client's for writes, both together for mixed (k picks another: " + kStops() + "; g sets the sender's buffers of both sides); the others follow. + and - step the ladder 4k … 8m from the size in effect: default from what the OS gives a fresh socket (208k on Linux), macos from 8k. Effective is what getsockopt reads back right after setting, before data flows. A real server's (a --server command's, a local --target's) shows its own value beside it: what its socket had when nbdscope first saw it, the size the process set itself (qemu-nbd 10.1+: 2m, read back as 4m) or the OS's; default restores it. Linux: the request doubled (2m shows as 4m), clamped to net.core.wmem_max. macOS: the value set, never doubled; XNU lowers a busy socket's internal send limit by the bytes queued in the peer (getsockopt adds them back), so a clamp is judged by the request and the limit, never by a live figure; a request above kern.ipc.maxsockbuf's limit is refused (ENOBUFS, before 14.4) or clamped (14.4 on), + stops there, and the message names the sysctl that lifts it"},
	{"placement", "where the side's load process and server run (o): split = a core each (a full send buffer costs a cross-core wake-up, as on a big machine), shared = one core (a cheap context switch: the buffer hardly matters), os = the scheduler decides"},
	{"pace", "what set the pace over the last 2 s: the process whose core was full (its own work: a bigger buffer cannot help), or waiting (none full)"},
	{"latency", "per request, p50 and p99 (l shows its chart)"},
	{"consume", "what the client does with each read (--consume, --at a.consume=…), which sets how fast it drains the socket:"},
	{"n/a", "not measured (e.g. the server of an external target) — never shown as 0"},
	{"full %", "sndbuf_full_pct: share of the time the bulk sender's data sockets held ≥ 90% of the send buffer: the sender waited on its reader, and a bigger buffer removes that wait (v: chart, with empty % dashed)"},
	{"empty %", "sndbuf_empty_pct: share of samples under 10%: the reader waited on the sender, so the buffer's size does not matter (unless it is also often full: too small to bridge a wake-up)"},
	{"fill bytes", "sndbuf_fill_bytes: mean bytes in flight (unix: wmem_alloc, what ss -xm shows as t), against the limit; the fill bar is the last sample's, the percentages the last 2 s (narrow: f full, e empty, in %); what measured it: kernel (k: BPF on a timer), kernel events (e: BPF at every change), or sampled (s) from user space: TCP, --fill-source sampler asked, or no BPF here (doctor says why)"},
	{"baseline", "A' ┈┈ and B' ┉┉: a saved run (b), drawn faintly behind the live series at the same time since its start; the legend shows its figure at the live run's elapsed time"},
	{"markers", "┊ in the charts and A/B on the time axis: a change took effect there"},
}

// seriesCalls are the reference figures the calls/2MiB figure is held up
// against: the qemu-devel series' own measurements, labelled as such, for
// a machine's figures may differ from them.
const seriesCalls = `the qemu-devel series "io: Increase unix stream socket buffer size" measured ~1 receive call per 2 MiB with a 2 MiB send buffer, ~10 at Linux's 208k default, ~256 at macOS's 8k: the series' figures, not this machine's`

// hereLabel labels the line with this machine's own figures.
const hereLabel = "  here"

// hereCalls says where this machine's own figures for the same buffers
// are, until the run has measured them (herecalls.go: then the line gives
// them).
const hereCalls = `this machine's own: the panels' calls rows (g puts A at macOS's 8k and B at 2m); 'nbdscope sweep' measures each size in turn`

// The help has two pages, so that neither runs past a screen or two:
// the keys first (what a user opening it wants), the figures second
// (tab turns the page). Together they ran past 100 lines.
const (
	helpKeys = iota
	helpFigures
)

// helpLines is the help's page in view: its title line, which names both
// pages, then the keys (bubbles/help) or the figures.
func (m *Model) helpLines(w int) []string {
	st := m.com.styles
	title := st.Title.Render("keys") + st.Dim.Render("  page 1 of 2 · tab: figures · esc or ? closes")
	if m.helpPage == helpFigures {
		title = st.Title.Render("figures") + st.Dim.Render("  page 2 of 2 · tab: keys · esc or ? closes")
		return append([]string{title}, m.figureLines(w)...)
	}
	return append([]string{title}, m.keyLines(w)...)
}

// keyLines are the keys page: the notes the key list cannot say, then
// every key, in two columns' worth of groups where one row is too wide.
func (m *Model) keyLines(w int) []string {
	hm := m.help
	hm.Width = 0
	groups := m.keys.FullHelp()
	var keys string
	if full := hm.FullHelpView(groups); lipgloss.Width(full) <= w {
		keys = full
	} else {
		half := (len(groups) + 1) / 2
		keys = hm.FullHelpView(groups[:half]) + "\n\n" + hm.FullHelpView(groups[half:])
	}
	var lines []string
	for _, l := range m.keyNotes() {
		lines = append(lines, wrap(l, w, 0)...)
	}
	lines = append(lines, "")
	return append(lines, strings.Split(keys, "\n")...)
}

// figureLines are the figures page: each figure's label and meaning.
func (m *Model) figureLines(w int) []string {
	st := m.com.styles
	var lines []string
	for _, f := range m.figureEntries() {
		wrapped := wrap(f[1], max(w-13, 10), 0) // the help scrolls: all of it
		for j, l := range wrapped {
			lab := ""
			if j == 0 {
				lab = f[0]
			}
			lines = append(lines, st.Label.Render(fmt.Sprintf(" %-11s ", lab))+l)
		}
	}
	return lines
}

// keyNotes are the help's lines about the keys that the key list cannot
// say: the case convention, what the buffer keys act on now, and what s
// writes.
func (m *Model) keyNotes() []string {
	notes := []string{"lowercase c r d lower, capital C R D raise (shift goes up, as it turns = into +)",
		fmt.Sprintf("+ - = act on %s's %s now (k picks another buffer)", m.cfg.Sides[m.focus].Name, m.panels[m.focus].steppedShort())}
	if p := m.runPath("NAME"); p != "" {
		notes = append(notes, "s saves a preset and the run so far ("+runFileSize+") as "+p)
	}
	return notes
}

// runPath is the file s writes the run to under name, "" when it writes
// none.
func (m *Model) runPath(name string) string {
	if m.opts.RunPath == nil || m.opts.SavePreset == nil {
		return ""
	}
	return m.opts.RunPath(name)
}

// runFileSize is how big the run file s writes gets: every sample of both
// sides, measured at the default 250 ms interval.
const runFileSize = "every sample, about 1 MB a minute"

// layoutHelp fits the help into w×h: too long for the area, it scrolls
// (↑/↓), and the last row says what is left. It keeps the offset in
// range and notes whether the help scrolls (the footer tells the keys).
func (m *Model) layoutHelp(w, h int) []string {
	lines := m.helpLines(w)
	m.helpMore = len(lines) > h && h >= 2
	if !m.helpMore {
		m.helpOff = 0
		return strings.Split(clipLines(strings.Join(lines, "\n"), w, h), "\n")
	}
	rows := h - 1
	m.helpOff = min(max(m.helpOff, 0), len(lines)-rows)
	shown := lines[m.helpOff : m.helpOff+rows]
	var more string
	switch below := len(lines) - m.helpOff - rows; {
	case below > 0 && m.helpOff > 0:
		more = fmt.Sprintf("↑↓ %d more lines above, %d below", m.helpOff, below)
	case below > 0:
		more = fmt.Sprintf("↓ %d more lines (↓ or pgdn scrolls)", below)
	default:
		more = fmt.Sprintf("↑ %d more lines above", m.helpOff)
	}
	shown = append(shown, m.com.styles.Dim.Render(more))
	return strings.Split(clipLines(strings.Join(shown, "\n"), w, h), "\n")
}

// scrollHelp scrolls the help for a scroll key and reports whether k was
// one. layoutHelp keeps the offset in range.
func (m *Model) scrollHelp(k tea.KeyMsg) bool {
	if !key.Matches(k, keyScroll) {
		return false
	}
	page := max(m.com.height/2, 1)
	switch k.String() {
	case "up":
		m.helpOff--
	case "down":
		m.helpOff++
	case "pgup":
		m.helpOff -= page
	case "pgdown":
		m.helpOff += page
	case "home":
		m.helpOff = 0
	case "end":
		m.helpOff = 1 << 20
	}
	return true
}

// helpEntries are the figures' help with a line for each consume mode
// after the consume entry, from the engine's one list of modes.
func helpEntries() [][2]string {
	var out [][2]string
	for _, f := range figureHelp {
		out = append(out, f)
		if f[0] == "consume" {
			for _, m := range model.ConsumeModes {
				out = append(out, [2]string{"  " + string(m.Name), m.Help})
			}
		}
	}
	return out
}
