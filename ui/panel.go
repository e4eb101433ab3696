package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/units"
)

// panel is one side: its settings (as requested, and as in effect where
// the kernel has a say) and its current figures, with the side's warnings.
type panel struct {
	com           *common
	idx           int
	width, height int

	focused bool
	pending bool // a change of this side is on its way
	paused  bool
	cfg     model.SideConfig
	// stepped are the buffers the buffer keys act on (the panel names the
	// first on its first line); nil: the bulk sender's.
	stepped []*model.Setting
	// runner is who runs the side as configured (cfg): figures measured
	// by another client or server are not shown as the side's (ours).
	runner runner

	last       *model.Sample // the latest sample
	lastActive *model.Sample // the latest sample with load running
	// lastTurn are the figures of the side's last turn, over the whole
	// of it (model.Sample.Turn), from the latest sample after it: what
	// the panel shows while the side waits (shown).
	lastTurn *model.Figures
	// changedAt is when a change of the side last took effect (run
	// time; hasChange: there was one): after its last turn ended, that
	// turn's figures were measured under the settings before it, while
	// the panel's rows show the new ones.
	changedAt float64
	hasChange bool
	// root is the root digest of the side's latest hashed full pass
	// (consume hash): what blksum prints for the export.
	root string
	// recent are the side's figures over its last 2 s of unchanged
	// settings, as the engine's meter added them (model.Sample.Recent),
	// for the pace and fill rows: one 250 ms sample is too short to say
	// which process used all of its core.
	recent *model.Figures
	// compete: the sides run at once on shared cores (Model.sidesCompete),
	// so the pace row claims nothing.
	compete bool
	// stuckFrom is when the side's load last ran without moving a byte
	// since (run time, seconds); negative while it makes progress.
	stuckFrom float64
	clamp     *model.Warning
	warn      *model.Warning // another warning about this side
	crash     *model.Crash
	// clientFlow is which way a real client (exec) moved its data in the
	// latest sample that said so, for the command clientFlowOf
	// (execFlow).
	clientFlow   model.Flow
	clientFlowOf string

	// warnOutside: the warnings are drawn below the panels, the width of
	// the screen, not in the panel (two narrow panels side by side).
	warnOutside bool

	// rows is content() at width rowsW, kept for the rest of one frame
	// (layout measures the panel, draw draws it); layout clears it.
	rows  []string
	rowsW int
}

// verdictFigures are the figures the pace and fill rows, and the fill
// chart's legend, read: a running side's last 2 s (model.Sample.Recent),
// a waiting side's last turn (as its other rows); nil before any.
func (p *panel) verdictFigures() *model.Figures {
	if f, lastTurn := p.shown(); lastTurn {
		return f
	}
	return p.recentOurs()
}

// runner is who measured a side's figures: its client (a real client's
// command; "" for our load) and its server (a real server's command; ""
// for ours). A side's figures belong to the runner that measured them:
// after e (or S) switched the side to another, its last turn's were the
// old client's, and were shown under the new one's command.
type runner struct{ exec, server string }

// runnerOf is who measured figures stamped st.
func runnerOf(st model.Stamp) runner { return runner{exec: st.Exec, server: st.Server} }

// ours reports whether figures f were measured by the side's runner
// now (f nil: there are none).
func (p *panel) ours(f *model.Figures) bool {
	return f != nil && runnerOf(f.Settings) == p.runner
}

// recentOurs are the side's last 2 s (model.Sample.Recent) when its
// runner now measured them, else nil.
func (p *panel) recentOurs() *model.Figures {
	if !p.ours(p.recent) {
		return nil
	}
	return p.recent
}

// verdict is what the shown figures say of the pace and of who waited
// (model.VerdictOf: one rule each, the run's and the sweep's too).
func (p *panel) verdict() (model.Verdict, bool) {
	f := p.verdictFigures()
	if f == nil {
		return model.Verdict{}, false
	}
	return model.VerdictOf(*f), true
}

// paceWords says what set the pace, in the panel's few words.
func (p *panel) paceWords() string {
	if v, ok := p.verdict(); ok {
		return phrase.PaceShort(v, p.compete)
	}
	return ""
}

// panelWideInner is the inner width from which settings and figures sit
// in two columns.
const panelWideInner = 66

func (p *panel) SetSize(w, h int) { p.width, p.height = w, h }

// observe takes a sample of this side.
func (p *panel) observe(s model.Sample) {
	p.last = &s
	if s.Settings.Exec != "" && (s.Flow == model.FlowRead || s.Flow == model.FlowWrite) {
		p.clientFlow, p.clientFlowOf = s.Flow, s.Settings.Exec
	}
	if !s.Active && !s.Warming && s.Turn != nil {
		p.lastTurn = s.Turn // a warming sample's is the new turn's
	}
	if s.RootDigest != "" {
		p.root = s.RootDigest
	}
	switch {
	case !s.Active || s.Bytes > 0:
		p.stuckFrom = -1 // off-turn or paused is not stuck
	case p.stuckFrom < 0:
		p.stuckFrom = s.T - s.Seconds
	}
	if s.Active {
		p.recent = s.Recent
		p.lastActive = &s
		if p.crash != nil && s.T > p.crash.T {
			p.crash = nil // it runs again
		}
	}
	if p.clamp != nil && !p.anyClamped(s.SndBuf) && s.T > p.clamp.T {
		p.clamp = nil // the buffer was changed or the limit lifted
	}
}

// anyClamped reports whether any buffer of a sample is clamped, as the
// engine judged them.
func (p *panel) anyClamped(b model.Buffers) bool {
	return b.Clamped || b.ClientClamped || b.ClientRcvClamped
}

func (p *panel) reset() {
	p.last, p.lastActive, p.lastTurn, p.recent, p.stuckFrom = nil, nil, nil, nil, -1
}

// changed notes that a change of the side took effect at t: the figures
// of a turn that ended before it are then marked as such.
func (p *panel) changed(t float64) { p.changedAt, p.hasChange = t, true }

// turnLabel names the last turn's figures the panel shows: before a
// change that took effect after the turn's load last ran, or the turn's
// alone. (A change within a turn starts its figures again after it, so
// they are never the two settings' mixed: engine/meter's turn.go.) The
// time of the turn's last active sample, not the panel's state when the
// event came, decides: space then C at once may bring the change before
// the pause's first waiting sample.
//
// A turn of a runner the side was switched to (e, S) after its last
// active sample (the new client ran before its first active sample)
// came after the switch, not before it.
func (p *panel) turnLabel() string {
	if p.hasChange && p.lastActive != nil && p.changedAt >= p.lastActive.T && p.ours(&p.lastActive.Figures) {
		return pick(!p.wide(), "figures: before the change", "figures: its last turn, before the change")
	}
	return pick(!p.wide(), "figures: last turn", "figures: its whole last turn")
}

// shown are the figures the panel shows, and whether they are the last
// turn's: the latest active sample's while the load runs; while it
// waits its turn (warms up, is paused), its last turn's, over the whole
// turn and the drain after it, as the run's summary adds them. The
// latest active sample of a turn is its end, often its drain alone (0.58
// server calls per 2 MiB shown against the run's 3.0).
//
// Figures another client or server measured (the side was switched to
// another since, by e, S or a preset) are not shown: there are none of
// the side's runner yet (othersOnly).
func (p *panel) shown() (f *model.Figures, lastTurn bool) {
	if p.last != nil && !p.last.Active && p.lastTurn != nil {
		if !p.ours(p.lastTurn) {
			return nil, false
		}
		return p.lastTurn, true
	}
	if p.lastActive != nil {
		return &p.lastActive.Figures, false
	}
	return nil, false
}

// othersOnly reports whether the side has figures, all of them measured
// by another client or server than it runs now (shown has none).
func (p *panel) othersOnly() bool {
	if f, _ := p.shown(); f != nil {
		return false
	}
	return p.lastTurn != nil || p.lastActive != nil
}

// othersLabel says, in the bottom border, why a side switched to another
// client or server shows no figures: the last ones were not its own.
func (p *panel) othersLabel() string {
	who := "client"
	name := procName(p.cfg.Exec)
	if p.cfg.Exec == "" {
		name = "our load"
	}
	if p.lastActive != nil && runnerOf(p.lastActive.Settings).exec == p.runner.exec {
		who, name = "server", procName(p.cfg.Server)
		if p.cfg.Server == "" {
			name = "our server"
		}
	}
	return pick(!p.wide(), "figures: none yet, new "+who, "figures: none yet from "+name+", the side's new "+who)
}

// stallAfter is how long a running load may go without completing a
// request before the panel says so.
const stallAfter = 2.0 // seconds

// stalled is how long the side's load has run without progress, or 0.
func (p *panel) stalled() float64 {
	if p.last == nil || p.stuckFrom < 0 {
		return 0
	}
	if d := p.last.T - p.stuckFrom; d >= stallAfter {
		return d
	}
	return 0
}

func (p *panel) inner() int { return p.width - 4 }

func (p *panel) wide() bool { return p.inner() >= panelWideInner }

// naturalHeight is the height the panel wants at its width.
func (p *panel) naturalHeight() int {
	return len(p.content()) + 2
}

// status is the title's state word; short is its form for a narrow
// title ("○ waiting" for "○ waiting its turn").
func (p *panel) status(short bool) string {
	st := p.com.styles
	var s string
	switch {
	case p.crash != nil:
		s = st.Error.Render("✗ crashed")
	case p.paused:
		s = st.Warn.Render("‖ paused")
	case p.last == nil:
		s = st.Dim.Render("… starting")
	case !p.last.Active && p.last.Warming:
		s = st.Dim.Render(pick(short, "◌ warming", "◌ warming its buffers"))
	case !p.last.Active:
		s = st.Dim.Render(pick(short, "○ waiting", "○ waiting its turn"))
	case p.stalled() > 0:
		s = st.Error.Render(fmt.Sprintf(pick(short, "⚠ stuck %.0fs", "⚠ no progress for %.0fs"), p.stalled()))
	default:
		s = st.OK.Render("● running")
	}
	switch {
	case p.pending && short && p.crash == nil && p.stalled() == 0 && p.last != nil:
		// The state's glyph says what it is; the word gives way to
		// the change on its way.
		glyph, _, _ := strings.Cut(ansi.Strip(s), " ")
		s = glyph + st.Dim.Render(" applying…")
	case p.pending:
		s += st.Dim.Render(" · applying…")
	}
	if f, _ := p.shown(); f != nil && f.ErrorCount() > 0 {
		s += " " + st.Error.Render(fmt.Sprintf(pick(short, "· %d err", "· %d errors"), f.ErrorCount()))
	}
	return s
}

func (p *panel) row(label string, lw int, value string) string {
	return p.com.styles.Label.Render(fmt.Sprintf("%-*s", lw, label)) + value
}

// val styles a value, n/a in the NA style.
func (p *panel) val(s string) string {
	if s == na {
		return p.com.styles.NA.Render(na)
	}
	return s
}

// bufPair is "2m → 4m eff" for a requested and an effective size.
func (p *panel) bufPair(b bufData) string {
	s := p.val(b.req) + p.com.styles.Dim.Render(" → ") + p.val(effSize(b.eff)) + p.com.styles.Dim.Render(" eff")
	if b.clamped {
		s += " " + p.com.styles.Warn.Render("clamped")
	}
	return s
}

// content is the panel's rows at its width, computed once a frame.
func (p *panel) content() []string {
	if p.rows == nil || p.rowsW != p.width {
		p.rows, p.rowsW = p.rowsOf(p.data()), p.width
	}
	return p.rows
}

// panelData is what a panel shows, as plain values: computed from the
// side's settings and its latest samples first (data), then rendered
// (rowsOf). Neither step reads what the other decides.
type panelData struct {
	fillWords         string  // who waited on whom, from the send-buffer fill
	server, serverRcv bufData // the buffers: requested → effective
	client, clientRcv bufData
	// bufs are the same buffers in the order shown: first those the
	// buffer keys step (stepped), then the others.
	bufs                  []shownBuf
	connections, inFlight int
	requestSize           int
	workload              model.Workload
	senders               []*model.Setting // the bulk sender's send buffers (senderBuffers)
	consume               string
	exec                  string // the real client's command when it is the side's load
	// targetPID and targetCmd name the local process serving a --target
	// that is measured and tuned as a real server (0: none).
	targetPID            int
	targetCmd            string
	root                 string // the latest pass's root digest while the side hashes
	pace                 string // what set the pace of the recent samples ("" before any)
	transport, placement string
	fig                  panelFigures
	errors               string // the latest active sample's; na without one
	placed               bool   // the CPUs below are known
	loadCPUs, serverCPUs string // where the load and server ran
	warnings             []model.Warning
}

// shownBuf is a buffer with its label (model.Setting.Label).
type shownBuf struct {
	label   string
	stepped bool
	bufData
}

// orderBufs puts the stepped buffers first, then the others, each in the
// settings table's order.
func orderBufs(stepped []*model.Setting, by map[string]bufData) []shownBuf {
	var first, rest []shownBuf
	for _, st := range model.BufferSettings() {
		if slices.Contains(stepped, st) {
			first = append(first, shownBuf{st.Label, true, by[st.Name]})
		} else {
			rest = append(rest, shownBuf{st.Label, false, by[st.Name]})
		}
	}
	return append(first, rest...)
}

// ordered is the data's buffers with the stepped ones first (nil: the
// bulk sender's for the workload).
func (d panelData) ordered(stepped []*model.Setting) []shownBuf {
	if stepped == nil {
		stepped = d.senders
	}
	if stepped == nil {
		stepped = model.SenderBuffers(d.workload)
	}
	return orderBufs(stepped, map[string]bufData{model.SetSndBuf: d.server, model.SetServerRcvBuf: d.serverRcv,
		model.SetClientSndBuf: d.client, model.SetClientRcvBuf: d.clientRcv})
}

// shownBufs are the buffers in the order shown.
func (d panelData) shownBufs() []shownBuf {
	if d.bufs == nil {
		return d.ordered(nil)
	}
	return d.bufs
}

// bufData is a buffer as requested and as in effect.
type bufData struct {
	req     string // na: not ours to set (an external target)
	eff     int
	clamped bool // the kernel gave less than requested
	// own (a real process's socket) is the value it had when first seen,
	// the process's own setting that default restores; ownBy names the
	// process ("qemu-nbd"). 0: not a real process's, or not seen yet.
	own   int
	ownBy string
}

// ownText is "qemu-nbd's own 208k", or with short "own 208k"; "" for a
// buffer of ours. The value is the effective size, as getsockopt read it.
func (p *panel) ownText(b bufData, short bool) string {
	if b.own <= 0 {
		return ""
	}
	who := "own "
	if !short && b.ownBy != "" {
		who = b.ownBy + "'s own "
	}
	return p.com.styles.Dim.Render(who) + effSize(b.own)
}

// bufLines are a buffer's row: "2m → 4m eff", then the process's own
// value where it is a real process's: named after the process on the
// same line when it fits in w, else (a wide panel, which has the rows)
// on a line of its own, else shortened to "own 208k".
func (p *panel) bufLines(label string, lw, w int, b bufData) []string {
	pair := p.bufPair(b)
	if b.own <= 0 {
		return []string{p.row(label, lw, pair)}
	}
	long, short := p.ownText(b, false), p.ownText(b, true)
	beside := func(t string) bool { return lw+cellWidth(pair)+3+cellWidth(t) <= w }
	own := long
	switch {
	case beside(long):
	case p.wide() && lw+cellWidth(long) <= w:
		return []string{p.row(label, lw, pair), p.row("", lw, long)}
	default:
		own = short
	}
	return p.rowLines(label, lw, w, pair, own)
}

// serverRcvSetting is the server's SO_RCVBUF entry of the settings table.
func serverRcvSetting() *model.Setting {
	st, _ := model.Lookup(model.SetServerRcvBuf)
	return st
}

// procName is the name a real process goes by: its command's first
// word without its directory ("qemu-nbd").
func procName(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return ""
	}
	return filepath.Base(strings.Trim(f[0], `'"`))
}

// data computes what the panel shows from its side's state.
func (p *panel) data() panelData {
	c := p.cfg
	var buf model.Buffers
	if p.last != nil {
		buf = p.last.SndBuf
	}
	d := panelData{
		server:      bufData{req: c.SndBuf.String(), eff: buf.ServerEffective, clamped: buf.Clamped},
		serverRcv:   bufData{req: c.ServerRcvBuf.String(), eff: buf.ServerRcvEffective, clamped: buf.ServerRcvClamped},
		client:      bufData{req: c.ClientSndBuf.String(), eff: buf.ClientEffective, clamped: buf.ClientClamped},
		clientRcv:   bufData{req: c.ClientRcvBuf.String(), eff: buf.ClientRcvEffective, clamped: buf.ClientRcvClamped},
		connections: c.Connections, inFlight: c.InFlight, requestSize: c.RequestSize,
		workload: c.Workload, senders: p.senderBuffers(), consume: consumeLine(c),
		transport: string(c.Transport), placement: c.Get(model.SetPlacement),
		fig: p.figures(), errors: na,
	}
	if c.Target != "" {
		d.server.req, d.serverRcv.req, d.transport = na, na, "external "+c.Target
		if p.last != nil && p.last.TargetServer != nil {
			// A local server, measured: its buffers are set from outside.
			ts := p.last.TargetServer
			d.targetPID, d.targetCmd, d.transport = ts.PID, ts.Command, "target "+c.Target
			if ts.BuffersNA == nil {
				d.server.req, d.serverRcv.req = c.SndBuf.String(), c.ServerRcvBuf.String()
			}
			d.server.own, d.server.ownBy = buf.ServerOwn, procName(ts.Command)
			d.serverRcv.own, d.serverRcv.ownBy = buf.ServerRcvOwn, procName(ts.Command)
		}
	}
	if c.Server != "" {
		d.server.own, d.server.ownBy = buf.ServerOwn, procName(c.Server)
		d.serverRcv.own, d.serverRcv.ownBy = buf.ServerRcvOwn, procName(c.Server)
	}
	if c.Exec != "" {
		// A real client's sockets are its own, changed from outside:
		// its own values beside them.
		d.exec = c.Exec
		d.client.own, d.client.ownBy = buf.ClientOwn, procName(c.Exec)
		d.clientRcv.own, d.clientRcv.ownBy = buf.ClientRcvOwn, procName(c.Exec)
	}
	d.bufs = d.ordered(p.stepped)
	if c.Server == "" && c.ServerRcvBuf.Kind == model.BufDefault && !slices.Contains(p.stepped, serverRcvSetting()) {
		// Rarely what a side turns: shown once it is set, stepped, or
		// a real server's (its own value).
		d.bufs = slices.DeleteFunc(d.bufs, func(b shownBuf) bool { return b.label == serverRcvSetting().Label })
	}
	if model.ConsumeMode(c.Get(model.SetConsume)) == model.ConsumeHash {
		d.root = p.root
	}
	d.pace = p.paceWords()
	d.fillWords = p.fillWords()
	if f, _ := p.shown(); f != nil {
		d.errors = na // a real client's requests are not seen
		if f.Errors != nil {
			d.errors = fmt.Sprint(*f.Errors)
		}
	}
	if p.last != nil && p.last.Placement.Setting != "" {
		d.placed, d.loadCPUs, d.serverCPUs = true, p.last.Placement.LoadCPUs, p.last.Placement.ServerCPUs
	}
	for _, w := range []*model.Warning{p.flowNote(), p.clamp, p.warn} {
		if w != nil {
			d.warnings = append(d.warnings, *w)
		}
	}
	return d
}

// rowsOf renders a panel's data at its width: the settings and figures
// (in two columns when wide), then the warnings.
func (p *panel) rowsOf(d panelData) []string {
	if p.inner() < 4 {
		return nil
	}
	var rows []string
	if p.wide() {
		rows = p.wideRows(d)
	} else {
		rows = p.narrowRows(d)
	}
	if p.warnOutside {
		return rows
	}
	return append(rows, p.warningRows(d.warnings, p.inner())...)
}

// keptHyphen stands for a hyphen while a value is wrapped: a non-breaking
// hyphen, one cell wide as "-" is, which ansi.Wrap does not break after.
const keptHyphen = "\u2011"

// rowLines is a row whose value may not fit its w cells: the parts
// joined by " · " as far as they fit, then on more lines under the value
// column; a part wider than a line is word-wrapped. Nothing is cut.
func (p *panel) rowLines(label string, lw, w int, parts ...string) []string {
	sep := p.com.styles.Dim.Render(" · ")
	vw := max(w-lw, 8)
	var lines []string
	cur := ""
	for _, part := range parts {
		pw := cellWidth(part)
		switch {
		case part == "":
		case cur != "" && cellWidth(cur)+cellWidth(sep)+pw <= vw:
			cur += sep + part
		case pw <= vw:
			if cur != "" {
				lines = append(lines, cur)
			}
			cur = part
		default:
			if cur != "" {
				lines = append(lines, cur)
			}
			// Break a long word after its punctuation (a command's
			// JSON, a path) before anywhere else. ansi.Wrap always breaks
			// after a hyphen, which cut a command's flag in two ("… -f
			// raw -" over "O raw {uri}"): its hyphens are kept whole.
			ls := strings.Split(strings.ReplaceAll(ansi.Wrap(strings.ReplaceAll(part, "-", keptHyphen), vw, ",:/"), keptHyphen, "-"), "\n")
			lines = append(lines, ls[:len(ls)-1]...)
			cur = ls[len(ls)-1]
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		lab := ""
		if i == 0 {
			lab = label
		}
		out[i] = p.row(lab, lw, strings.TrimRight(l, " "))
	}
	return out
}

// execLines is how many lines a client's command gets in a panel; a
// longer one says how much more there is.
const execLines = 5

// execRows are the rows of a side whose load is a real client: its
// command, in place of our load's settings.
func (p *panel) execRows(d panelData, lw, w int, extra ...string) []string {
	return p.cappedRows("exec", lw, w, execLines, d.exec, extra...)
}

// cappedRows are rowLines of a command (text, then the extra parts) on at
// most limit lines; a longer one says how much more there is.
func (p *panel) cappedRows(label string, lw, w, limit int, text string, extra ...string) []string {
	rows := p.rowLines(label, lw, w, append([]string{text}, extra...)...)
	if len(rows) <= limit {
		return rows
	}
	shown := rows[:limit-1]
	n := 0
	for _, r := range shown {
		n += len(strings.TrimSpace(ansi.Strip(r)))
	}
	n -= len(label)
	more := len(text) - n
	return append(shown, p.row("", lw, p.com.styles.Dim.Render(fmt.Sprintf("(+%d more characters)", max(more, 1)))))
}

// targetLines is how many lines a target's server gets in a wide panel.
const targetLines = 3

// targetRows name the local process serving the side's --target: its PID
// and command, cut to targetLines with how much more there is (the
// target's warning has it whole).
func (p *panel) targetRows(d panelData, lw, w int) []string {
	return p.cappedRows("server", lw, w, targetLines, fmt.Sprintf("PID %d · %s", d.targetPID, d.targetCmd))
}

// narrowRows are a narrow panel's rows: a line for each group.
func (p *panel) narrowRows(d panelData) []string {
	st := p.com.styles
	const lw = 8
	f := d.fig
	who := ""
	if f.cpu.ClientOnly && f.cpu.SPerGiB.Known() { // no server of ours to measure
		who = " (cli)"
	}
	conns := fmt.Sprintf("%d conn", d.connections)
	if d.connections != 1 {
		conns += "s"
	}
	calls := st.Strong.Render(p.val(fig(f.recvCalls))) + st.Dim.Render(" per 2MiB ("+f.recv+" recv)")
	if f.recv == string(model.FlowChanged) {
		calls = st.Strong.Render(p.val(na)) + st.Dim.Render(" per 2MiB (recv changed)")
	}
	if !f.write && !f.recvCalls.Known() && f.sendCalls.Known() {
		// A real client's calls are its own (n/a); the server's sends
		// still show the buffer, as the wide panel's headline does.
		calls = st.Strong.Render(p.val(fig(f.sendCalls))) + st.Dim.Render(" per 2MiB ("+f.send+" send)")
	}
	iw := p.inner()
	rows := p.narrowBufs(d.shownBufs(), lw)
	if d.exec != "" {
		rows = append(rows, p.execRows(d, lw, iw, d.transport)...)
	} else {
		where := d.transport
		if d.targetPID > 0 {
			// The process behind the target is the news; the wide
			// panel has the URI too.
			where = fmt.Sprintf("target PID %d %s", d.targetPID, procName(d.targetCmd))
		}
		parts := []string{conns, fmt.Sprintf("%d×%s", d.inFlight, units.FormatSize(int64(d.requestSize))), string(d.workload), where}
		if !p.consumeInTitle() {
			parts = append(parts, "consume "+d.consume)
		}
		rows = append(rows, p.rowLines("load", lw, iw, parts...)...)
	}
	rows = append(rows, p.rowLines("rate", lw, iw, st.Strong.Render(p.val(rate(f.tput))), p.val(fig(f.cpu.SPerGiB))+st.Dim.Render(" cpu s/GiB"+who))...)
	rows = append(rows, p.row("calls", lw, calls))
	if f.write { // the send buffer shows in the sender's calls
		rows = append(rows, p.row("send", lw, st.Strong.Render(p.val(fig(f.sendCalls)))+st.Dim.Render(" + ")+
			p.val(fig(f.sendEAGAIN))+st.Dim.Render(" EAGAIN ("+f.send+")")))
	}
	rows = append(rows, p.row("cores", lw, p.val(fig(f.cliCores))+st.Dim.Render(" cli + ")+p.val(fig(f.srvCores))+st.Dim.Render(" srv · ")+d.placement))
	if t := p.timeRow(f, true); t != "" {
		rows = append(rows, p.row("time", lw, t))
	}
	return append(rows, p.row(p.fillLabel(), lw, p.fillShort()+st.Dim.Render(" · p99 ")+p.ms(f.p99)))
}

// shortBuf abbreviates a buffer's label for a narrow panel.
var shortBuf = strings.NewReplacer("server ", "srv ", "client ", "cli ", "sndbuf", "snd", "rcvbuf", "rcv")

// narrowBufs are a narrow panel's buffer lines: the buffer the keys step
// ("client sndbuf 2m → 4m eff"), then the others' effective sizes on a
// second line. When the keys step the server's buffer alone (a read side,
// as in the seed) the line is just "sndbuf 2m → 4m eff" and the second
// line is left out, so an 80x24 screen keeps its chart rows; the wide
// panel lists every buffer.
func (p *panel) narrowBufs(bufs []shownBuf, lw int) []string {
	st := p.com.styles
	var names, others []string
	for _, b := range bufs {
		if b.stepped {
			names = append(names, b.label)
			continue
		}
		o := st.Dim.Render(shortBuf.Replace(b.label)+" ") + p.val(effSize(b.eff))
		if b.own > 0 {
			o += st.Dim.Render(" (") + p.ownText(b.bufData, true) + st.Dim.Render(")")
		}
		others = append(others, o)
	}
	label := "srv+cli sndbuf"
	switch {
	case len(names) == 1 && names[0] == model.BufferSettings()[0].Label:
		return p.bufLines("sndbuf", lw, p.inner(), bufs[0].bufData)
	case len(names) == 1:
		label = names[0]
	}
	// The others' effective sizes start at the left edge, as the line
	// above does, and go on to a second line rather than be cut.
	others[len(others)-1] += st.Dim.Render(" eff")
	first := p.bufLines(label, max(lw, cellWidth(label)+1), p.inner(), bufs[0].bufData)
	return append(first, p.rowLines("", 0, p.inner(), others...)...)
}

// wideRows are a wide panel's rows: the settings on the left, the
// figures on the right.
func (p *panel) wideRows(d panelData) []string {
	const lw = 14
	var left []string
	colW := (p.inner() - 3) / 2
	for _, b := range d.shownBufs() {
		left = append(left, p.bufLines(b.label, lw, colW, b.bufData)...)
	}
	if d.exec != "" {
		// A real client: its command, not our load's settings.
		left = append(left, p.execRows(d, lw, colW)...)
	} else {
		left = append(left,
			p.row("connections", lw, fmt.Sprint(d.connections)),
			p.row("request size", lw, units.FormatSize(int64(d.requestSize))),
			p.row("in flight", lw, fmt.Sprintf("%d per connection", d.inFlight)),
			p.row("workload", lw, string(d.workload)),
			p.row("consume", lw, d.consume))
	}
	if d.root != "" {
		// Its first 16 hex digits, as git shortens a hash: enough to
		// hold up against blksum's output; run and the JSON carry all.
		left = append(left, p.row("root digest", lw, shortDigest(d.root)))
	}
	left = append(left, p.rowLines("transport", lw, colW, d.transport)...)
	if d.targetPID > 0 {
		left = append(left, p.targetRows(d, lw, colW)...)
	}
	left = append(left, p.row("placement", lw, d.placement))
	if d.pace != "" {
		left = append(left, p.rowLines("pace", lw, colW, d.pace, d.fillWords)...)
	}
	right := p.figureRows(d, 12)
	var rows []string
	for i := range max(len(left), len(right)) {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		rows = append(rows, fit(l, colW)+"   "+r)
	}
	return rows
}

// warningRows are the warnings at width iw: the text and the fix, each
// on as many lines as it takes (where the fix persists only when the
// panel is wide: it is a sentence of its own, left out whole).
func (p *panel) warningRows(ws []model.Warning, iw int) []string {
	st := p.com.styles
	var rows []string
	for _, w := range ws {
		for _, l := range wrap("▲ "+phrase.WarningShort(w), iw, 0) {
			rows = append(rows, st.Warn.Render(l))
		}
		fix := phrase.WarningFix(w)
		if !p.wide() {
			fix, _, _ = strings.Cut(fix, "  (")
		}
		if fix != "" {
			for _, l := range wrap("fix: "+fix, iw, 0) {
				rows = append(rows, st.Info.Render(l))
			}
		}
	}
	return rows
}

// shortDigest is a digest's first 16 hex digits.
func shortDigest(d string) string {
	if len(d) > 16 {
		return d[:16]
	}
	return d
}

// latency is "p50 1.2 ms · p99 3.4 ms".
func (p *panel) latency(f panelFigures) string {
	st := p.com.styles
	return st.Dim.Render("p50 ") + p.ms(f.p50) + st.Dim.Render(" · p99 ") + p.ms(f.p99)
}

// ms is a latency in milliseconds, "3.4 ms"; unmeasured (a real client's
// requests are not seen) "n/a", with no unit.
func (p *panel) ms(f model.Figure) string {
	if !f.Known() {
		return p.val(na)
	}
	return p.val(fig(f)) + p.com.styles.Dim.Render(" ms")
}

// cores says where the side's processes ran, from the latest sample.
func (p *panel) cores(d panelData) string {
	st := p.com.styles
	if !d.placed {
		return p.val(na)
	}
	return st.Dim.Render("load ") + p.val(d.loadCPUs) + st.Dim.Render(" · server ") + p.val(d.serverCPUs)
}

// panelFigures are the figures a panel shows, from the latest active
// sample and its own stamp (the settings it was measured under, not a
// change on its way).
type panelFigures struct {
	write                       bool
	recv, send                  string // process names
	tput, recvCalls, recvEAGAIN model.Figure
	sendCalls, sendEAGAIN       model.Figure
	cliCores, cliPerGiB         model.Figure
	srvCores, srvPerGiB         model.Figure
	cliWake, srvWake            model.Figure
	cliFaults, srvFaults        model.Figure
	cliRun, cliWait             model.Figure // cores on a CPU, waiting for one (timebar.go)
	srvRun, srvWait             model.Figure
	cpu                         model.CPU
	p50, p99                    model.Figure
}

func (p *panel) figures() panelFigures {
	u := model.Unknown
	fl := p.keysFlow()
	a, _ := p.shown()
	if a != nil {
		fl = a.Direction()
	}
	f := panelFigures{write: fl == model.FlowWrite, recv: processLabel(fl.Receiver()), send: processLabel(fl.Sender()),
		tput: u, recvCalls: u, recvEAGAIN: u, sendCalls: u, sendEAGAIN: u, cliCores: u, cliPerGiB: u,
		srvCores: u, srvPerGiB: u, cliWake: u, srvWake: u, cliFaults: u, srvFaults: u, p50: u, p99: u,
		cliRun: u, cliWait: u, srvRun: u, srvWait: u,
		cpu: model.CPU{UserS: u, SysS: u, CoresBusy: u, SPerGiB: u}}
	if a == nil {
		return f
	}
	// Each figure through its entry of the table of figures: a server's
	// is unknown without a server, a receiver's across a change of
	// direction.
	for name, to := range map[string]*model.Figure{
		model.FigThroughput: &f.tput, model.FigP50: &f.p50, model.FigP99: &f.p99,
		model.FigReceiverCalls: &f.recvCalls, model.FigReceiverAgain: &f.recvEAGAIN,
		model.FigSenderCalls: &f.sendCalls, model.FigSenderAgain: &f.sendEAGAIN,
		model.FigClientCores: &f.cliCores, model.FigClientPerGiB: &f.cliPerGiB,
		model.FigClientWake: &f.cliWake, model.FigClientFaults: &f.cliFaults,
		model.FigServerCores: &f.srvCores, model.FigServerPerGiB: &f.srvPerGiB,
		model.FigServerWake: &f.srvWake, model.FigServerFaults: &f.srvFaults,
	} {
		*to = model.FigureOf(name).Get(a)
	}
	f.cliRun, f.cliWait = schedOf(a.Client) // the time bar's own parts (timebar.go)
	if a.Server != nil {
		f.srvRun, f.srvWait = schedOf(*a.Server)
	}
	f.cpu = a.CPU()
	return f
}

// processLabel names the receiver or sender beside its figures: "changed"
// for an interval in which the workload changed direction (its receiver
// figures are n/a: they would mix two processes' calls).
func processLabel(name string) string {
	if name == "" {
		return string(model.FlowChanged)
	}
	return name
}

// execFlow is which way the side's real client moved its data, as the
// engine's latest sample of its command said (its server's payload); ""
// for our load, or before the client moved any.
func (p *panel) execFlow() model.Flow {
	if p.cfg.Exec == "" || p.clientFlowOf != p.cfg.Exec {
		return ""
	}
	return p.clientFlow
}

// keysFlow is which way the side's bulk data goes for the buffer keys
// (its sender's send buffer) and for the labels before any figures: a
// real client's own, else the workload's.
func (p *panel) keysFlow() model.Flow {
	if fl := p.execFlow(); fl != "" {
		return fl
	}
	return model.FlowOf(p.cfg.Workload)
}

// senderBuffers are the send buffers of the side's bulk sender, those the
// buffer keys step by default (model.SenderBuffers: both for a mixed
// workload): a real client's by which way it moved its data, so the
// buffer stepped is the one whose figures the panel shows.
func (p *panel) senderBuffers() []*model.Setting {
	if fl := p.execFlow(); fl != "" {
		return model.SenderBuffers(fl.Workload())
	}
	return model.SenderBuffers(p.cfg.Workload)
}

// flowNote says that the side's real client moved its data the other way
// than its workload says, so its figures are those of what it did; nil
// when it does not contradict it.
func (p *panel) flowNote() *model.Warning {
	fl := p.execFlow()
	if fl == "" || fl == model.FlowOf(p.cfg.Workload) {
		return nil
	}
	w := model.Warn(p.cfg.ID(), model.ExecFlowOther{Flow: fl, Workload: p.cfg.Workload})
	return &w
}

// figureRows are the wide panel's right column: the headline (the
// receiver's receive calls; for writes the sender's send calls too),
// EAGAIN by direction, wake-ups, page faults, CPU, latency.
func (p *panel) figureRows(d panelData, lw int) []string {
	st := p.com.styles
	f := d.fig
	recv := p.val(fig(f.recvCalls))
	send := p.val(fig(f.sendCalls))
	total := f.cpu // client and server (engine's CPU); n/a without a server of ours
	if total.ClientOnly {
		total.CoresBusy, total.SPerGiB = model.Unknown, model.Unknown
	}
	if f.write {
		send = st.Strong.Render(send)
	} else {
		recv = st.Strong.Render(recv)
	}
	rows := []string{
		p.row("throughput", lw, st.Strong.Render(p.val(rate(f.tput)))),
		p.row("recv calls", lw, recv+st.Dim.Render(" per 2 MiB ("+f.recv+")")),
		p.row("send calls", lw, send+st.Dim.Render(" per 2 MiB ("+f.send+")")),
		p.row("EAGAIN", lw, p.val(fig(f.recvEAGAIN))+st.Dim.Render(" recv · ")+p.val(fig(f.sendEAGAIN))+st.Dim.Render(" send")),
		p.row("wake/2MiB", lw, p.val(fig(f.cliWake))+st.Dim.Render(" cli · ")+p.val(fig(f.srvWake))+st.Dim.Render(" srv")),
		p.row("faults/2MiB", lw, p.val(fig(f.cliFaults))+st.Dim.Render(" cli · ")+p.val(fig(f.srvFaults))+st.Dim.Render(" srv")),
		p.row("cpu client", lw, p.val(fig(f.cliCores))+st.Dim.Render(" cores · ")+p.val(fig(f.cliPerGiB))+st.Dim.Render(" s/GiB")),
		p.row("cpu server", lw, p.val(fig(f.srvCores))+st.Dim.Render(" cores · ")+p.val(fig(f.srvPerGiB))+st.Dim.Render(" s/GiB")),
		p.row("cpu total", lw, p.val(fig(total.CoresBusy))+st.Dim.Render(" cores · ")+
			p.val(fig(total.SPerGiB))+st.Dim.Render(" s/GiB")),
		p.row("sndbuf fill", lw, p.fillGauge((p.inner()-3)/2-lw)),
		p.row("latency", lw, p.latency(f)),
		p.row("errors", lw, p.val(d.errors)),
		p.row("cores", lw, p.cores(d)),
	}
	// The long form where it fits the column, else the short: at 160x48
	// the long one was cut ("▓ wa…").
	t := p.timeRow(f, false)
	if cellWidth(t) > (p.inner()-3)/2-lw {
		t = p.timeRow(f, true)
	}
	if t != "" {
		rows = append(rows, p.row("time", lw, t))
	}
	return rows
}

// View draws the box: the title in the top border, a thick border when
// focused (visible without colour too).
func (p *panel) View() string {
	if p.width < 8 || p.height < 2 {
		return ""
	}
	st := p.com.styles
	tl, tr, bl, br, hz, vt := "╭", "╮", "╰", "╯", "─", "│"
	bst := st.Border
	if p.focused {
		tl, tr, bl, br, hz, vt = "┏", "┓", "┗", "┛", "━", "┃"
		bst = st.Focus
	}
	iw := p.inner()
	name := p.cfg.Name
	if name == "" {
		name = string(rune('A' + p.idx))
	}
	title := p.title()
	fill := p.width - 5 - cellWidth(title)
	top := bst.Render(tl+hz) + " " + title + " " + bst.Render(strings.Repeat(hz, max(fill, 0))+tr)
	lines := []string{top}
	body := append([]string(nil), p.content()...)
	for len(body) < p.height-2 {
		body = append(body, "")
	}
	body = body[:max(p.height-2, 0)]
	for _, l := range body {
		lines = append(lines, bst.Render(vt)+" "+fit(l, iw)+" "+bst.Render(vt))
	}
	if p.height >= 2 {
		lines = append(lines, p.bottom(bst.Render, bl, hz, br))
	}
	if len(lines) > p.height {
		lines = lines[:p.height]
	}
	return strings.Join(lines, "\n")
}

// bottom is the bottom border. While the panel shows its last turn's
// figures (shown) the border says so: there it takes no row, so the
// panel keeps its height from one turn to the next, and the title keeps
// the side's state.
func (p *panel) bottom(border func(...string) string, bl, hz, br string) string {
	rule := func(n int) string { return strings.Repeat(hz, max(n, 0)) }
	label := ""
	if _, lastTurn := p.shown(); lastTurn {
		label = p.turnLabel()
	} else if p.othersOnly() {
		label = p.othersLabel()
	}
	if label == "" || cellWidth(label)+6 > p.width {
		return border(bl + rule(p.width-2) + br)
	}
	fill := p.width - 5 - cellWidth(label)
	return border(bl+rule(fill)) + " " + p.com.styles.Dim.Render(label) + " " + border(hz+br)
}

// titles are the title's forms, longest first: the side's name and
// state and, in a narrow panel, the consume mode (it has no row to spare
// there: it rides in the title when the title has room, else on the load
// row). A real client's side has no consume mode of ours.
func (p *panel) titles() (withConsume []string, bare string) {
	st := p.com.styles
	name := p.cfg.Name
	if name == "" {
		name = string(rune('A' + p.idx))
	}
	lead := st.Side[p.idx].Bold(true).Render(name) + " "
	if p.focused {
		lead = st.Focus.Render("▸ ") + lead
	}
	full, short := lead+p.status(false), lead+p.status(true)
	if p.wide() || p.cfg.Exec != "" {
		return nil, full
	}
	c := st.Dim.Render(" · consume " + consumeLine(p.cfg))
	return []string{full + c, short + c}, short
}

// title is the first form of the title that fits the top border.
func (p *panel) title() string {
	forms, bare := p.titles()
	for _, t := range forms {
		if cellWidth(t) <= p.width-6 {
			return t
		}
	}
	return clip(bare, p.width-6)
}

// consumeInTitle reports whether the narrow title holds the consume mode
// (else the load row shows it).
func (p *panel) consumeInTitle() bool {
	forms, _ := p.titles()
	for _, t := range forms {
		if cellWidth(t) <= p.width-6 {
			return true
		}
	}
	return false
}

// consumeLine is the consume mode, with its hash threads setting when it
// hashes ("hash×auto", "hash×3").
func consumeLine(c model.SideConfig) string {
	m := c.Get(model.SetConsume)
	if model.ConsumeMode(m) == model.ConsumeHash {
		m += "×" + c.Get(model.SetHashThreads)
	}
	return m
}

// pick is a if cond holds, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
