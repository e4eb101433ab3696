package sweep

import (
	"context"
	"math"
	"testing"
	"time"

	"nbdscope/clientrun"
	"nbdscope/engine"
	"nbdscope/internal/childtest"
	"nbdscope/model"
)

// TestExecSweepClientSched: an exec sweep's client has where its time
// went, as our children and real servers have: a shell that spins, then
// sleeps 0.4 s in the same process. Its run, wait and sleep sum to its one
// thread's wall over the span read (within 2%), the span is its run's
// time less at most a poll or two, the sleep holds the 0.4 s (less the
// poll left out at its end), its time on a CPU is getrusage's at most,
// and the row's client figures (cores on a CPU, waiting, asleep) are
// known. They were n/a: the client's schedstat went with it at its exit.
func TestExecSweepClientSched(t *testing.T) {
	cfg := childtest.Config()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const line = `sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exec sleep 0.4' client {uri}`
	spec := model.SweepSpec{Sizes: []model.Buf{{Kind: model.BufDefault}}, Bytes: 1 << 20, Repeat: 1, Exec: &model.ExecSpec{Command: line}}
	rows, err := ExecSweep(ctx, cfg, spec, clientrun.Command{Line: line}, engine.Options{Facts: &testFacts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Exec == nil || len(rows[0].Exec.Runs) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	run := rows[0].Exec.Runs[0]
	s := run.ClientSched
	if s.SpanS <= 0 {
		t.Fatalf("the client's schedstat was not read: %+v", s)
	}
	if sum := s.RunS + s.WaitS + s.SleepS; math.Abs(sum-s.SpanS) > 0.02*s.SpanS {
		t.Errorf("run %.3f + wait %.3f + sleep %.3f = %.3f s, want its one thread's wall %.3f s within 2%%", s.RunS, s.WaitS, s.SleepS, sum, s.SpanS)
	}
	if lag := run.Seconds - s.SpanS; lag < -0.05 || lag > 2*execSchedPoll.Seconds()+0.05 {
		t.Errorf("span %.3f s against the run's %.3f s", s.SpanS, run.Seconds)
	}
	if s.SleepS < 0.4-2*execSchedPoll.Seconds()-0.05 {
		t.Errorf("asleep %.3f s, want about the 0.4 s it slept", s.SleepS)
	}
	if cpu := run.UserS + run.SysS; s.RunS > cpu+0.02 {
		t.Errorf("on a CPU %.3f s, more than getrusage's %.3f s", s.RunS, cpu)
	}
	t.Logf("client: run %.3f wait %.3f sleep %.3f span %.3f; the run %.3f s, rusage %.3f s", s.RunS, s.WaitS, s.SleepS, s.SpanS, run.Seconds, run.UserS+run.SysS)
	c := rows[0].Figures.Client
	for name, f := range map[string]model.Figure{"on a CPU": c.CoresOnCPU, "waiting": c.CoresWaiting, "asleep": c.CoresAsleep} {
		if !f.Known() {
			t.Errorf("the row's client cores %s are n/a", name)
		}
	}
}
