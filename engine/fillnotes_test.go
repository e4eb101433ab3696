package engine

import (
	"errors"
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
)

// The warnings a side's looks and samples give, by their kinds: a look
// between two runs of a client finds no connection, and is no failure
// once the span's fill was measured; a span with none measured is said,
// during the run after fillMissSamples, or at its end; a reason of the
// whole span is said at once; each once a run.
func TestFillNotesWarnOnlyWhatHoldsOverTheSpan(t *testing.T) {
	ld, next := &child{}, &child{}
	miss, moment := FillReason(noConnection{1, 2})
	if !moment || miss.Kind != model.ReasonNoConnection {
		t.Fatalf("no connection is %+v (moment %v): want a moment's no-connection", miss, moment)
	}
	said := func(r *model.Reason) string {
		if r == nil {
			return ""
		}
		return phrase.ReasonLong(*r)
	}

	var n fillNotes
	n.look(ld, nil, false)
	if w := n.sample(true, true, nil); w != nil {
		t.Fatalf("a sample with fill warned %q", said(w))
	}
	for range 3 * fillMissSamples {
		n.look(ld, miss, true)
		if w := n.sample(false, true, nil); w != nil {
			t.Fatalf("a miss between runs, after a measured sample, warned %q", said(w))
		}
	}
	if w := n.spanEnd(); w != nil {
		t.Fatalf("the end of a measured span warned %q", said(w))
	}

	n = fillNotes{}
	n.look(ld, miss, true)
	for i := 1; i < fillMissSamples; i++ {
		if w := n.sample(false, true, nil); w != nil {
			t.Fatalf("miss %d of a span with no fill yet warned %q: want it at %d", i, said(w), fillMissSamples)
		}
		n.sample(false, false, nil) // an idle sample is no miss
	}
	w := said(n.sample(false, true, nil))
	if !strings.HasPrefix(w, "no connection between PID 1 and PID 2 found") || !strings.Contains(w, "in any of the 20 samples in which the load ran") {
		t.Fatalf("miss %d warned %q: want the reason over the samples", fillMissSamples, w)
	}
	refused := model.Failed(errors.New("refused"))
	if w := n.sample(false, true, refused); w != nil || n.spanEnd() != nil {
		t.Fatalf("a second warning %q: want one a run", said(w))
	}

	n = fillNotes{}
	n.look(ld, miss, true)
	n.sample(false, true, nil)
	if w := said(n.look(next, nil, false)); !strings.Contains(w, "in any of the 1 sample in which") {
		t.Fatalf("a restart after an unmeasured span warned %q: want that span said", w)
	}

	n = fillNotes{}
	n.look(ld, nil, false)
	n.sample(true, true, nil)
	getfd := model.Failed(errors.New("pidfd_getfd: operation not permitted"))
	if w := n.sample(false, true, getfd); w != getfd {
		t.Fatalf("a refusal warned %q: want it at once, whatever was measured", said(w))
	}
	n = fillNotes{}
	n.look(ld, model.Failed(errors.New("the sender's sockets (PID 3): permission denied")), false)
	if w := said(n.sample(false, true, nil)); !strings.Contains(w, "permission denied") {
		t.Fatalf("a look that failed for good warned %q: want it at once", w)
	}
}
