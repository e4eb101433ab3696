package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// run's text says what a change of a real server's buffer did: the value
// read back from its socket and how many sockets it reached; and the
// summary's buffer row shows the process's own value beside the one in
// effect.
func TestRunTextShowsRealServerOwnAndReached(t *testing.T) {
	rep := reporttest.Report()
	rep.Sides[1].Summary.SndBuf.ServerOwn = 212992
	two, none := 2, 0
	rep.Events = append(rep.Events,
		model.Event{T: 3, Side: "B", Setting: model.SetSndBuf, From: "default", To: "2m", Effective: 4 << 20, Reached: &two},
		model.Event{T: 4, Side: "B", Setting: model.SetSndBuf, From: "2m", To: "1m", Reached: &none})
	var out bytes.Buffer
	Summary(&out, rep)
	text := out.String()
	for _, want := range []string{"2m (4m), own 208k", "B sndbuf: default → 2m (4m read back, 2 sockets reached)",
		"B sndbuf: 2m → 1m (no socket open yet: applied to each as it connects)"} {
		if !strings.Contains(text, want) {
			t.Errorf("run's text lacks %q:\n%s", want, text)
		}
	}
}
