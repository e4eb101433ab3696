package e2e

import (
	"syscall"
	"testing"
)

// TestExplorerSignals: SIGINT and SIGTERM from outside end the explorer as
// q and ctrl+c do, with exit 0, as its --help says (issue 21: SIGINT gave
// exit 1, "program was interrupted").
func TestExplorerSignals(t *testing.T) {
	need(t, "tmux")
	if !haveProc() {
		t.Skip("e2e: needs /proc to find the explorer's process")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tm := startTerm(t, 80, 24)
			tm.waitForData()
			if err := syscall.Kill(tm.pid, sig); err != nil {
				t.Fatal(err)
			}
			if got := tm.waitExit(); got != "exit status 0" {
				t.Errorf("explorer after %v: %s, want exit status 0", sig, got)
			}
		})
	}
}
