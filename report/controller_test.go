package report

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// The run's notes say what nbdscope's own controller took once it passes
// 2% of a core, and nothing below or where it was not measured.
func TestRunNotesControllerCPU(t *testing.T) {
	for _, c := range []struct {
		busy *model.Figure
		want string
	}{
		{new(model.Figure(0.034)), "▲ nbdscope's own controller used 3.4% of a core during the run"},
		{new(model.Figure(0.006)), ""},
		{nil, ""},
	} {
		var b strings.Builder
		printRunNotes(&b, model.Report{ControllerCoresBusy: c.busy})
		got := b.String()
		if c.want != "" && !strings.Contains(got, c.want) || c.want == "" && strings.Contains(got, "controller") {
			t.Errorf("controller at %v: notes %q, want %q", c.busy, got, c.want)
		}
	}
}
