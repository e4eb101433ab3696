package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
)

// segmentsTable returns the rows of the markdown's Segments table, head
// first.
func segmentsTable(t *testing.T, md string) [][]string {
	t.Helper()
	_, sec, ok := strings.Cut(md, "## Segments\n")
	if !ok {
		t.Fatalf("no Segments section:\n%s", md)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows [][]string
	for _, l := range strings.Split(sec, "\n") {
		if strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "|--") {
			rows = append(rows, reporttest.Cells(l))
		}
	}
	return rows
}

// runs show of a run with changes: the Segments table has a column for
// every setting that differs between its rows (client-rcvbuf, transport,
// placement among them), so no two stretches of a side read alike, and
// the summary rows are labelled by what they were measured under.
func TestExportMarkdownSegmentsTellStretchesApart(t *testing.T) {
	var b bytes.Buffer
	if err := RunMarkdown(&b, "fixture", reporttest.Changes(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	rows := segmentsTable(t, md)
	head := rows[0]
	for _, want := range []string{"client-rcvbuf", "transport", "placement", "sndbuf", "connections"} {
		if !slices.Contains(head, want) {
			t.Errorf("Segments head %q lacks %s", head, want)
		}
	}
	fig := slices.Index(head, "throughput")
	if fig < 0 {
		t.Fatalf("no throughput column: %q", head)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		key := r[0] + "|" + strings.Join(r[2:fig], "|") // side and settings, not the times
		if seen[key] {
			t.Errorf("two segments read alike (%s):\n%s", key, md)
		}
		seen[key] = true
	}
	if len(rows) != 7 {
		t.Errorf("%d segment rows, want 6", len(rows)-1)
	}
	if !strings.Contains(md, "In every segment: client-sndbuf default, server-rcvbuf default, request-size 2m, in-flight 8, workload read, consume scan") {
		t.Errorf("no line of the settings every segment shares:\n%s", md)
	}
	if !strings.Contains(md, "- A: the whole run, across changes of client-rcvbuf, placement, transport:") {
		t.Errorf("A's summary does not say what it mixes:\n%s", md)
	}
	// A kept its server sndbuf; its effective size followed the transport.
	if got := reporttest.TableRow(t, md, "side", "A")[1]; got != "default (eff. 208k) → default (eff. 4m)" {
		t.Errorf("A's buffer cell %q", got)
	}
	// B moved payload only under 64k: its label is that, whatever it was
	// set to while it waited for its turn.
	if got := reporttest.TableRow(t, md, "side", "B")[1]; got != "64k (eff. 128k)" {
		t.Errorf("B's buffer cell %q", got)
	}
}
