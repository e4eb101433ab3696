package wire

import (
	"errors"
	"fmt"
	"testing"

	"nbdscope/model"
	"nbdscope/probe/sockctl"
	"nbdscope/probe/sockdiag"
	"nbdscope/probe/syscount"
)

// Every reason an instrument gives is one of the model's kinds, with the
// facts it read and its fix: a reason added to probe/syscount or
// probe/sockctl without a kind here came out as a bare failure.
func TestReasonOfKeepsTheInstrumentsReasons(t *testing.T) {
	for r := syscount.ReasonUnsupported; r <= syscount.ReasonOff; r++ {
		got := ReasonOf(fmt.Errorf("probe: %w", &syscount.Unavailable{Reason: r, Why: "facts " + r.String(), Fix: "fix " + r.String()}))
		if got.Kind == "" || got.Kind == model.ReasonFailed || got.Detail != "facts "+r.String() || got.Fix != "fix "+r.String() {
			t.Errorf("syscount %s: %+v", r, got)
		}
	}
	for r := sockctl.ReasonUnsupported; r <= sockctl.ReasonNoFD; r++ {
		got := ReasonOf(&sockctl.Error{PID: 1, FD: 3, Reason: r, Why: "facts", Fix: "fix"})
		if got.Kind == "" || got.Kind == model.ReasonFailed || got.Detail != "facts" || got.Fix != "fix" {
			t.Errorf("sockctl %s: %+v", r, got)
		}
	}
	if got := ReasonOf(&sockdiag.NotAvailableError{What: "socket fill", Reason: "not on darwin"}); got.Kind != model.ReasonNotOnThisOS {
		t.Errorf("sockdiag not available: %+v", got)
	}
	if got := ReasonOf(errors.New("EIO")); got.Kind != model.ReasonFailed || got.Detail != "EIO" {
		t.Errorf("an error: %+v", got)
	}
	if ReasonOf(nil) != nil {
		t.Error("no error gave a reason")
	}
}
