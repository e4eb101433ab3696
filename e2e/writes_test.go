package e2e

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestExplorerWrites (issue 17): on a write side the buffer keys act on
// the client's send buffer, the bulk sender's. The explorer starts with
// B's client send buffer at 2m; the test picks B, switches it to writes
// (w), checks the panel's first line now names the client's send buffer,
// presses - five times (2m, 1m, 512k, 256k, 128k, 64k) and reads the
// client buffer back from the panel: 64k requested, 128k effective on
// Linux (the request doubled).
func TestExplorerWrites(t *testing.T) {
	underTmuxAtEachSize(t, exploreWrites)
}

func exploreWrites(t *testing.T, w, h int) {
	start := time.Now()
	tm := startTerm(t, w, h, "--client-sndbuf-b", "2m")
	var view [2]sideView
	var lastErr error
	wait := func(what string, cond func() bool) {
		t.Helper()
		tm.waitFor(what, func(rows []string) bool {
			v, err := panels(rows, w)
			if view, lastErr = v, err; err != nil {
				return false
			}
			return cond()
		})
	}
	defer func() {
		if t.Failed() && lastErr != nil {
			t.Logf("last screen did not parse: %v", lastErr)
		}
	}()
	wait("data moving on B", func() bool { return view[1].rate > 0 })
	if view[1].stepped != "sndbuf" && view[1].stepped != "server sndbuf" {
		t.Errorf("B reads: the first buffer line is %q, want the server's", view[1].stepped)
	}

	tm.keys("2")
	wait("B focused", func() bool { return strings.Contains(view[1].title, "▸ B") })
	tm.keys("w")
	wait("B writing, its first line the client's send buffer at 2m", func() bool {
		return view[1].stepped == "client sndbuf" && view[1].stepReq == "2m" && !view[1].pending
	})
	t.Logf("%v: B writes: %s %s → %s eff", time.Since(start).Round(time.Millisecond), view[1].stepped, view[1].stepReq, view[1].stepEff)

	for i, want := range []string{"1m", "512k", "256k", "128k", "64k"} {
		tm.keys("-")
		wait(fmt.Sprintf("- #%d: B client sndbuf %s", i+1, want), func() bool {
			return view[1].stepped == "client sndbuf" && view[1].stepReq == want && !view[1].pending
		})
	}
	wantEff := func(v sideView) bool { return v.stepEff != "n/a" }
	if runtime.GOOS == "linux" {
		wantEff = func(v sideView) bool { return v.stepEff == "128k" }
	}
	wait("B client sndbuf 64k → 128k eff", func() bool { return view[1].stepReq == "64k" && wantEff(view[1]) })
	t.Logf("%v: B client sndbuf %s → %s eff", time.Since(start).Round(time.Millisecond), view[1].stepReq, view[1].stepEff)
	if view[1].sndReq != "" && view[1].sndReq != "2m" {
		t.Errorf("B's server send buffer moved too: %s", view[1].sndReq)
	}
	if view[0].stepped != "sndbuf" && view[0].stepped != "server sndbuf" || view[0].sndReq != "default" {
		t.Errorf("A changed too: %v (%s)", view[0], view[0].stepped)
	}

	tm.keys("q")
	if st := tm.waitExit(); st != "exit status 0" {
		t.Errorf("nbdscope ended with %s; last screen:\n%s", st, tm.last)
	}
}
