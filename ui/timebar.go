package ui

import (
	"math"
	"strings"

	"nbdscope/model"
)

// The panel's row of where each process's time went (from
// probe/schedstat): a small bar per process, one core wide, of its
// busiest thread, the one doing its work (model.Process.LeadWaiting):
// █ on a CPU, ▓ runnable but waiting on a run queue for a CPU, ░ the
// rest (asleep); then the longer wait, which is what the contention
// verdict reads, so the row and the pace words say one thing. All the
// threads' cores (CoresOnCPU, CoresWaiting) are in the figures table:
// they count the runtime's helpers queued behind the busiest thread on
// the process's own core (a quiet pair's server: 0.29 cores waiting in
// all, 0.06 in its writer). In a run saved before the busiest thread
// was kept the bar is all the threads', which fill it in proportion
// where they ran and waited more than one core's worth. The row is
// left out where the times are not measured (macOS, a kernel without
// schedstat), so the panel keeps its other rows at 80x24.

// timeBarCells is one process's bar's width.
const timeBarCells = 5

// timeBar is one process's bar: run and wait in cells of one core.
func timeBar(run, wait model.Figure) string {
	if !run.Known() || !wait.Known() {
		return strings.Repeat("·", timeBarCells)
	}
	scale := max(1, float64(run+wait))
	r := int(math.Round(timeBarCells * float64(run) / scale))
	w := min(int(math.Round(timeBarCells*float64(wait)/scale)), timeBarCells-r)
	if wait > 0 && w == 0 && float64(wait) >= model.ContendedShare/2 && r > 0 {
		r, w = r-1, 1 // a wait that tells shows, whatever the rounding
	}
	return strings.Repeat("█", r) + strings.Repeat("▓", w) + strings.Repeat("░", timeBarCells-r-w)
}

// schedOf is the share of the span a process's busiest thread ran and
// waited for a CPU (all its threads' cores in a run saved before that
// was kept); unknown where its times were not read (no span: a figure
// made without them).
func schedOf(p model.Process) (run, wait model.Figure) {
	s := p.Sched
	switch {
	case s.SpanS <= 0:
		return model.Unknown, model.Unknown
	case s.LeadRunS > 0 && p.LeadWaiting.Known():
		return model.CoresBusy(s.LeadRunS, s.SpanS), p.LeadWaiting
	}
	return p.CoresOnCPU, p.CoresWaiting
}

// timeRow is the row's value: "cli █▓░░░ srv ██▓░░ ▓ wait 38%" (short,
// a narrow panel's and a column too narrow for that: "c █▓░░░ s ██▓░░
// ▓38%"), the longer waiter's share of the span;
// "" where neither process's times are measured.
func (p *panel) timeRow(f panelFigures, short bool) string {
	if !f.cliWait.Known() && !f.srvWait.Known() {
		return ""
	}
	st := p.com.styles
	most := model.Figure(0)
	for _, w := range []model.Figure{f.cliWait, f.srvWait} {
		if w.Known() {
			most = max(most, w)
		}
	}
	return st.Dim.Render(pick(short, "c ", "cli ")) + p.val(timeBar(f.cliRun, f.cliWait)) + st.Dim.Render(pick(short, " s ", " srv ")) +
		p.val(timeBar(f.srvRun, f.srvWait)) + st.Dim.Render(pick(short, " ▓", " ▓ wait ")) + p.val((100*most).Fixed(0)+"%")
}
