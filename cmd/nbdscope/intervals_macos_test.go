package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

// --intervals says, once and before a side's first line at macOS's 8 KiB
// buffer, that this is this kernel and not XNU, with the series' 12.6x:
// its lines' figures were the first a user saw of a macos-gap run, and
// nothing said so until the summary.
func TestIntervalsMacOSMark(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on a Mac the buffer is macOS's own")
	}
	var b bytes.Buffer
	p := newIntervalPrinter(&b, model.Duration(250*time.Millisecond), true)
	for i := 1; i <= 3; i++ {
		for _, side := range []model.SideID{"A", "B"} {
			s := model.Sample{T: float64(i) * 0.25, Side: side, Active: true, Connections: 1}
			s.Seconds, s.Bytes, s.ThroughputBps = 0.25, 1<<20, 4<<20
			s.SndBuf.ServerRequested = "2m"
			if side == "A" {
				s.SndBuf.ServerRequested = "macos"
			}
			p.update(model.Update{Sample: &s})
		}
	}
	p.update(model.Update{Done: &model.Done{}})
	out := b.String()
	if n := strings.Count(out, "not on XNU"); n != 1 {
		t.Fatalf("the mark is printed %d times, want once:\n%s", n, out)
	}
	mark, firstA := strings.Index(out, "not on XNU"), strings.Index(out, "[A]")
	if firstA < 0 || mark > firstA || !strings.Contains(out, "(side A)") || !strings.Contains(out, "12.6x") {
		t.Errorf("want the mark of side A with 12.6x before A's first line:\n%s", out)
	}
}
