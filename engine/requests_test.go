package engine

import (
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
)

// Failing requests are said once per side, with the last failure's text:
// run --workload-b write against a read-only qemu-nbd measured 0 B/s
// with 715 errors and said nothing of why, exit 0.
func TestWarnRequestsOncePerSideWithTheReason(t *testing.T) {
	p := &Pair{updates: make(chan model.Update, 8), ending: make(chan struct{})}
	p.rec = &recorder{p: p}
	s := &side{name: "B", id: model.SideAt(1), p: p}
	ok := model.Sample{Side: "B"}
	failed := model.Sample{Side: "B"}
	errs := uint64(152)
	failed.Errors, failed.Seconds = &errs, 0.25
	p.warnRequests(s, &ok, "")
	p.warnRequests(s, &failed, "nbd: EINVAL (invalid argument): Export is read-only")
	p.warnRequests(s, &failed, "nbd: EINVAL (invalid argument): Export is read-only")
	close(p.updates)
	var said []string
	for u := range p.updates {
		if u.Warning != nil && u.Warning.Kind == model.WarnRequests {
			said = append(said, phrase.WarningLong(*u.Warning))
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "side B: 152 requests failed") || !strings.Contains(said[0], "Export is read-only") {
		t.Errorf("warnings %q: want one naming the side, the count and the reason", said)
	}
}
