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

// The markdown of a run (runs show, runs export --format md) gives the
// start's server receive buffer in its setup, and, as run's text does,
// what a change of a real server's buffer read back: it had neither, so a
// run started at --server-rcvbuf-b 1m read as if at the default.
func TestRunMarkdownShowsServerRcvBufAndReached(t *testing.T) {
	rep := reporttest.Report()
	rep.Config.Sides[1].ServerRcvBuf = model.Buf{Kind: model.BufSize, Bytes: 1 << 20}
	one := 1
	rep.Events = append(rep.Events, model.Event{T: 3, Side: "B", Setting: model.SetServerRcvBuf, From: "1m", To: "default", Effective: 212992, Reached: &one})
	var out bytes.Buffer
	if err := RunMarkdown(&out, "r", rep); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"| server sndbuf | server rcvbuf |", "| 1m ", "default (208k read back, 1 socket reached)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the run's markdown lacks %q:\n%s", want, text)
		}
	}
}

// runs compare says which settings the two runs' sides started with
// differently, a real server among them: the ratios are of those
// changes, and the table alone did not say that b's B was qemu-nbd.
func TestCompareSaysWhatStartedDifferently(t *testing.T) {
	a, b := reporttest.Report(), reporttest.Report()
	b.Config.Sides[1].Server = "qemu-nbd -r -t -k {socket} null-co"
	b.Config.Sides[1].ServerRcvBuf = model.Buf{Kind: model.BufSize, Bytes: 1 << 20}
	var out bytes.Buffer
	if err := Compare(&out, Run{Name: "a", Report: a}, Run{Name: "b", Report: b}); err != nil {
		t.Fatal(err)
	}
	want := "- B started differently: server-rcvbuf default → 1m; server ours → qemu-nbd -r -t -k {socket} null-co"
	if !strings.Contains(out.String(), want) {
		t.Errorf("compare lacks %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "- A started differently") {
		t.Errorf("A started alike in both runs:\n%s", out.String())
	}
}
