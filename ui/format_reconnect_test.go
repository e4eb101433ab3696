package ui

import (
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
)

// A change that re-opened the side's connections (a TCP buffer back to the
// OS default) says so on the charts.
func TestEventLabelReconnected(t *testing.T) {
	ev := model.Event{Side: "B", Setting: model.SetSndBuf, From: "64k", To: "default", Reconnected: true}
	if got, want := phrase.EventShort(ev), "B sndbuf 64k→default (reconnected)"; got != want {
		t.Fatalf("label %q, want %q", got, want)
	}
	ev.Reconnected = false
	if got, want := phrase.EventShort(ev), "B sndbuf 64k→default"; got != want {
		t.Fatalf("label %q, want %q", got, want)
	}
}
