package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExplorer runs the explorer on its default preset, linux-gap (A at the OS
// default send buffer, B at 2 MiB, one connection each, alternate mode)
// and, as a user would:
//   - waits until both panels show data moving (a non-zero rate) and a
//     CPU figure of a side that ran (at least 0.05 cores, client and server
//     together: the figures of the side's last turn, not of its idle time);
//   - picks B (2), sets its send buffer to 64k (- at 80x24, = 64k enter at
//     160x48) and reads back "64k → 128k eff" (Linux doubles the request);
//   - adds a connection (C) and reads back 2 connections and the change
//     "B connections 1→2";
//   - opens the help (?), goes to its end (End) and closes it (esc);
//   - quits (q) and checks the exit status 0, that no process of the
//     binary is left and that the socket directory is gone.
//
// Every screen captured must fit the pane.
func TestExplorer(t *testing.T) {
	underTmuxAtEachSize(t, explore)
}

var reSockDir = regexp.MustCompile(`"socket":"([^"]+)/[AB]\.sock"`)

// socketDir is the directory of the sockets the running explorer's
// children were started with, "" while none runs (it needs /proc).
func socketDir() string {
	dir := ""
	for _, p := range binProcs() {
		if m := reSockDir.FindStringSubmatch(p.cmdline); m != nil && p.nbdscope {
			dir = m[1]
		}
	}
	return dir
}

func explore(t *testing.T, w, h int) {
	start := time.Now()
	tm := startTerm(t, w, h)

	// The whole screen: header on top, key help at the bottom.
	screenOK := func(rows []string) error {
		if len(rows) != h {
			return fmt.Errorf("%d rows, want %d", len(rows), h)
		}
		if !strings.HasPrefix(rows[0], "nbdscope  mode ") {
			return fmt.Errorf("no header in the first row: %q", rows[0])
		}
		if !strings.Contains(rows[h-1], "q quit") {
			return fmt.Errorf("no key help in the last row: %q", rows[h-1])
		}
		return nil
	}
	var view [2]sideView
	var lastErr error
	// read parses the screen into view; a screen that does not parse
	// (yet) is not an error until a wait gives up.
	read := func(rows []string) bool {
		if err := screenOK(rows); err != nil {
			lastErr = err
			return false
		}
		v, err := panels(rows, w)
		if err != nil {
			lastErr = err
			return false
		}
		view, lastErr = v, nil
		return true
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		tm.waitFor(what, func(rows []string) bool { return read(rows) && cond() })
	}
	defer func() {
		if t.Failed() && lastErr != nil {
			t.Logf("last screen did not parse: %v", lastErr)
		}
	}()

	// 1. Both sides move data, with realistic CPU figures.
	ran := func(v sideView) bool { return v.rate > 0 && v.cpuCli+v.cpuSrv >= 0.05 }
	wait("data moving on both sides (rate > 0, cpu ≥ 0.05 cores)", func() bool { return ran(view[0]) && ran(view[1]) })
	t.Logf("%v: both sides running: A %v; B %v", time.Since(start).Round(time.Millisecond), view[0], view[1])
	if rows := tm.capture(); !strings.Contains(rows[0], "preset linux-gap ") {
		t.Errorf("header does not name the default preset linux-gap (unmodified): %q", rows[0])
	}
	if view[0].sndReq != "default" || view[1].sndReq != "2m" || view[0].conns != 1 || view[1].conns != 1 {
		t.Errorf("default preset: want A default and B 2m, 1 connection each; A %v; B %v", view[0], view[1])
	}

	// Where its sockets are: under the TMPDIR we gave it.
	sockDir := ""
	if haveProc() {
		sockDir = socketDir()
		if sockDir == "" {
			t.Errorf("no child process with a socket in its command line: %v", binProcs())
		} else if filepath.Dir(sockDir) != tm.tmpDir {
			t.Errorf("socket directory %s is not in TMPDIR %s", sockDir, tm.tmpDir)
		}
	}

	// 2. Pick B.
	tm.keys("2")
	wait("B focused", func() bool {
		return strings.Contains(view[1].title, "▸ B") && !strings.Contains(view[0].title, "▸")
	})

	// 3. B's send buffer to 64k.
	if w < 100 {
		// Step down the ladder (2m, 1m, 512k, …) one key at a time.
		for n := 0; view[1].sndReq != "64k"; n++ {
			if n == 12 {
				t.Fatalf("- pressed %d times, B sndbuf still %s", n, view[1].sndReq)
			}
			from := view[1].sndReq
			tm.keys("-")
			wait("B sndbuf to change from "+from, func() bool { return view[1].sndReq != from })
		}
	} else {
		tm.keys("=")
		tm.waitFor("the sndbuf prompt", func(rows []string) bool { return strings.Contains(strings.Join(rows, "\n"), "B sndbuf = ") })
		tm.typeText("64k")
		tm.waitFor("64k typed", func(rows []string) bool { return strings.Contains(strings.Join(rows, "\n"), "B sndbuf = 64k") })
		tm.keys("Enter")
	}
	wantEff := func(v sideView) bool { return v.sndEff != "n/a" }
	if runtime.GOOS == "linux" {
		// Linux doubles the request; wmem_max is never below 64k.
		wantEff = func(v sideView) bool { return v.sndEff == "128k" && !v.clamped }
	}
	wait("B sndbuf 64k → 128k eff", func() bool {
		return view[1].sndReq == "64k" && !view[1].pending && wantEff(view[1])
	})
	t.Logf("%v: B sndbuf %s → %s eff", time.Since(start).Round(time.Millisecond), view[1].sndReq, view[1].sndEff)

	// 4. One more connection for B.
	tm.keys("C")
	rows := tm.waitFor("B at 2 connections", func(rows []string) bool {
		return read(rows) && view[1].conns == 2 && !view[1].pending &&
			strings.Contains(strings.Join(rows, "\n"), "B connections 1→2")
	})
	if !strings.Contains(rows[0], "preset linux-gap* ") {
		t.Errorf("header does not mark the preset modified: %q", rows[0])
	}
	if w < 100 && !strings.Contains(strings.Join(view[1].body, "\n"), "2 conns") {
		t.Errorf("B's load line does not say 2 conns:\n%s", strings.Join(rows, "\n"))
	}
	t.Logf("%v: B at %d connections", time.Since(start).Round(time.Millisecond), view[1].conns)
	if view[0].sndReq != "default" || view[0].conns != 1 {
		t.Errorf("A changed too: %v", view[0])
	}
	// B still moves data after the changes.
	wait("B moving data after the changes", func() bool { return ran(view[1]) && strings.Contains(view[1].title, "running") })

	// The help (?) fits the pane too: its first page the keys, its
	// second (tab) the figures, which scrolls where it is longer; esc
	// brings the panels back.
	tm.keys("?")
	tm.waitFor("the help", func(rows []string) bool {
		s := strings.Join(rows, "\n")
		return strings.Contains(s, "keys  page 1 of 2") && strings.Contains(rows[h-1], "close help")
	})
	tm.keys("Tab")
	tm.waitFor("the help's figures page", func(rows []string) bool {
		return strings.Contains(strings.Join(rows, "\n"), "figures  page 2 of 2")
	})
	tm.keys("End")
	tm.waitFor("the help's figures, at its end", func(rows []string) bool {
		return strings.Contains(strings.Join(rows, "\n"), "markers")
	})
	tm.keys("Escape")
	wait("the panels after the help", func() bool { return true })

	// 5. Quit: a clean exit, nothing left behind.
	tm.keys("q")
	if st := tm.waitExit(); st != "exit status 0" {
		t.Errorf("nbdscope ended with %s; last screen:\n%s", st, tm.last)
	}
	t.Logf("%v: exited", time.Since(start).Round(time.Millisecond))
	if !haveProc() {
		t.Log("no /proc: leftover processes not checked")
	} else {
		// The explorer stopped its children before it exited: none may
		// be left, not even for a moment after.
		for _, p := range binProcs() {
			if p.nbdscope {
				t.Errorf("still running after the explorer exited: %d %s", p.pid, p.cmdline)
			}
		}
		if sockDir != "" {
			if _, err := os.Stat(sockDir); !os.IsNotExist(err) {
				t.Errorf("socket directory %s still there (stat: %v)", sockDir, err)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tm.tmpDir, "nbdscope-*")); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestHangup closes the terminal under a running explorer (SIGHUP, as when
// a terminal window or an ssh session goes away): the explorer, its
// children and its socket directory must all be gone soon after.
func TestHangup(t *testing.T) {
	need(t, "tmux")
	if !haveProc() {
		t.Skip("e2e: needs /proc to find the processes")
	}
	tm := startTerm(t, 80, 24)
	tm.waitForData()
	sockDir := socketDir()
	if sockDir == "" {
		t.Fatalf("no child process with a socket in its command line: %v", binProcs())
	}
	if err := syscall.Kill(tm.pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		var left []proc
		for _, p := range binProcs() {
			if p.nbdscope {
				left = append(left, p)
			}
		}
		_, err := os.Stat(sockDir)
		if len(left) == 0 && os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after SIGHUP: processes %v, socket directory %s (stat: %v)", waitTimeout, left, sockDir, err)
		}
		time.Sleep(pollEvery)
	}
}
