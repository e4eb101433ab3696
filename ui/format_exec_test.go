package ui

import (
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
)

// A finished run of an exec side is marked on the charts with its time.
func TestEventLabelExecRun(t *testing.T) {
	ev := model.Event{Side: "B", Setting: model.ExecRunEvent, To: "2.314s"}
	if got, want := phrase.EventShort(ev), "B client run 2.314s"; got != want {
		t.Fatalf("label %q, want %q", got, want)
	}
}
