package engine

import (
	"strings"
	"testing"
)

// The warnings a side's looks and samples give, by their kinds: a look
// between two runs of a client finds no connection, and is no failure
// once the span's fill was measured; a span with none measured is said,
// during the run after fillMissSamples, or at its end; a reason of the
// whole span is said at once; each once a run.
func TestFillNotesWarnOnlyWhatHoldsOverTheSpan(t *testing.T) {
	ld, next := &child{}, &child{}
	miss := noConnection{1, 2}.Error()

	var n fillNotes
	n.look(ld, "", false)
	if w := n.sample(true, true, ""); w != "" {
		t.Fatalf("a sample with fill warned %q", w)
	}
	for range 3 * fillMissSamples {
		n.look(ld, miss, true)
		if w := n.sample(false, true, ""); w != "" {
			t.Fatalf("a miss between runs, after a measured sample, warned %q", w)
		}
	}
	if w := n.spanEnd(); w != "" {
		t.Fatalf("the end of a measured span warned %q", w)
	}

	n = fillNotes{}
	n.look(ld, miss, true)
	for i := 1; i < fillMissSamples; i++ {
		if w := n.sample(false, true, ""); w != "" {
			t.Fatalf("miss %d of a span with no fill yet warned %q: want it at %d", i, w, fillMissSamples)
		}
		n.sample(false, false, "") // an idle sample is no miss
	}
	w := n.sample(false, true, "")
	if !strings.HasPrefix(w, miss) || !strings.Contains(w, "in any of the 20 samples in which the load ran") {
		t.Fatalf("miss %d warned %q: want the reason over the samples", fillMissSamples, w)
	}
	if w := n.sample(false, true, "refused"); w != "" || n.spanEnd() != "" {
		t.Fatalf("a second warning %q: want one a run", w)
	}

	n = fillNotes{}
	n.look(ld, miss, true)
	n.sample(false, true, "")
	if w := n.look(next, "", false); !strings.Contains(w, "in any of the 1 sample in which") {
		t.Fatalf("a restart after an unmeasured span warned %q: want that span said", w)
	}

	n = fillNotes{}
	n.look(ld, "", false)
	n.sample(true, true, "")
	if w := n.sample(false, true, "pidfd_getfd: operation not permitted"); w != "pidfd_getfd: operation not permitted" {
		t.Fatalf("a refusal warned %q: want it at once, whatever was measured", w)
	}
	n = fillNotes{}
	n.look(ld, "the sender's sockets (PID 3): permission denied", false)
	if w := n.sample(false, true, ""); !strings.Contains(w, "permission denied") {
		t.Fatalf("a look that failed for good warned %q: want it at once", w)
	}
}
