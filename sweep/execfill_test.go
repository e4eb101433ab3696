package sweep

import (
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/probe/sockdiag"
)

// TestExecFillNA: without a sampler (sock_diag not available: macOS) every
// run's fill is n/a with the reason and the fix; a client that never
// started says so instead of a lookup's failure.
func TestExecFillNA(t *testing.T) {
	f := &execFill{err: &sockdiag.NotAvailableError{What: "socket diagnostics", Reason: "not available on darwin"}}
	fl, r, _ := f.watch(1).finish(false)
	why := phrase.ReasonWithFix(*r)
	if fl.Known() || r.Kind != model.ReasonNotOnThisOS || !strings.Contains(why, "socket diagnostics not available on darwin") || !strings.HasSuffix(why, "(measured on Linux only)") {
		t.Errorf("no sampler: %+v, %q", fl, why)
	}
	f = startExecFill(t.Context(), model.FillSourceKernel)
	defer f.stop()
	if !f.measuring() {
		t.Skipf("no sampler here: %v", f.err)
	}
	fl, r, _ = f.watch(1).finish(true)
	if fl.Known() || r.Kind != model.ReasonNotRunning || phrase.ReasonLong(*r) != "the client did not start" {
		t.Errorf("not started: %+v, %+v", fl, r)
	}
}
