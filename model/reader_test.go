package model

import (
	"strings"
	"testing"

	"nbdscope/nbd"
)

// TestReaderSetting: a side reads with qemu's ppoll wait unless told
// (where it is built), takes netpoller, and refuses a reader it does not
// know with the setting's name.
func TestReaderSetting(t *testing.T) {
	sc := DefaultSide("A")
	want := ReaderNetpoller
	if nbd.PollReaderSupported {
		want = ReaderPoll
	}
	if got := ReaderMode(sc.Get(SetReader)); got != want {
		t.Errorf("default reader %q, want %q", got, want)
	}
	sc.Reader = ReaderNetpoller
	if err := sc.Validate(); err != nil {
		t.Errorf("netpoller refused: %v", err)
	}
	sc.Reader = "epoll"
	if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), "reader") {
		t.Errorf("reader epoll: %v, want a refusal naming the reader", err)
	}
	st, _ := Lookup(SetReader)
	if _, err := st.Parse("epoll"); err == nil {
		t.Error("--reader epoll parsed")
	}
}
