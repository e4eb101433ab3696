package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/model"
)

// Each process's bar is one core: on a CPU, waiting for one, the rest;
// a process that ran and waited over a core fills it in proportion.
func TestTimeBar(t *testing.T) {
	for _, c := range []struct {
		run, wait model.Figure
		want      string
	}{
		{0.4, 0.2, "██▓░░"},
		{0.37, 0.38, "██▓▓░"},
		{0.9, 0.12, "████▓"}, // a wait that tells shows
		{1.5, 0.5, "████▓"},
		{0, 0, "░░░░░"},
		{model.Unknown, model.Unknown, "·····"},
	} {
		if got := timeBar(c.run, c.wait); got != c.want {
			t.Errorf("run %v wait %v: %q, want %q", c.run, c.wait, got, c.want)
		}
	}
}

// The row fits an 80x24 screen's narrow panel (inner 36 cells), names
// the longer waiter's share, and is left out where the times were not
// read (a process without a span).
func TestTimeRowNarrow(t *testing.T) {
	p := panel{com: &common{styles: DefaultStyles()}}
	f := panelFigures{cliRun: 0.38, cliWait: 0.24, srvRun: 0.37, srvWait: 0.38}
	row := p.row("time", 8, p.timeRow(f, true))
	if w := ansi.StringWidth(row); w > 36 || !strings.Contains(row, "▓38%") {
		t.Errorf("narrow row %q (%d cells)", row, w)
	}
	if run, wait := schedOf(model.Process{CoresOnCPU: 0, CoresWaiting: 0}); run.Known() || wait.Known() {
		t.Errorf("a process without a span read %v %v, want n/a", run, wait)
	}
	// the busiest thread's shares, not all the threads' cores: the
	// quiet pair's server, whose sysmon queued behind its writer
	srv := model.Process{CoresOnCPU: 0.50, CoresWaiting: 0.29, LeadWaiting: 0.06,
		Sched: model.Sched{RunS: 4, WaitS: 2.32, SleepS: 57.68, SpanS: 8, LeadRunS: 3.2, LeadWaitS: 0.48}}
	if run, wait := schedOf(srv); run != 0.4 || wait != 0.06 {
		t.Errorf("server: bar of %v run %v wait, want its writer's 0.4 and 0.06", run, wait)
	}
	srv.LeadWaiting, srv.Sched.LeadRunS = model.Unknown, 0 // saved before the busiest thread was kept
	if run, wait := schedOf(srv); run != 0.50 || wait != 0.29 {
		t.Errorf("an older run's server: %v %v, want all threads' 0.50 and 0.29", run, wait)
	}
	u := model.Unknown
	if r := p.timeRow(panelFigures{cliRun: u, cliWait: u, srvRun: u, srvWait: u}, true); r != "" {
		t.Errorf("unmeasured: %q, want no row", r)
	}
}
