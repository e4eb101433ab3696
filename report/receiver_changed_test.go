package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// receiverChanged is what a whole-run figure of "the receiver" reads
// where the receiver changed: its reason, pointing at the segments.
const receiverChanged = "the receiver changed: see the segments"

// A's workload went read → write → read: its bulk data went to the
// client, the server, the client. Its whole-run "syscalls per 2 MiB" (the
// receiver's receive calls) mixed the client's reads with its replies of
// the writes: 9.78, below each of its segments (14.2, 20.9, 19.3). runs
// show's table prints n/a there and says why; so do its fill and the run's
// summary, whose per-process rows stay the processes' own sums.
func TestWholeRunReceiverFiguresAcrossAReceiverChange(t *testing.T) {
	rep := reporttest.WorkloadChanges(t)
	var md bytes.Buffer
	if err := RunMarkdown(&md, "wl2", rep); err != nil {
		t.Fatal(err)
	}
	head := "side"
	a := reporttest.TableRow(t, md.String(), head, "A")
	b := reporttest.TableRow(t, md.String(), head, "B")
	if a[6] != model.NA || a[7] != model.NA {
		t.Errorf("runs show: A's syscalls per 2 MiB %q, fill %q; want n/a (the receiver changed)", a[6], a[7])
	}
	if b[6] == model.NA || b[7] == model.NA {
		t.Errorf("runs show: B (read throughout) lost its figures: %q, %q", b[6], b[7])
	}
	if !strings.Contains(md.String(), receiverChanged) {
		t.Errorf("runs show does not say why A's figures are n/a:\n%s", md.String())
	}
	// The segments keep each stretch's receiver and its figure.
	for _, want := range []string{"14.20 (client)", "20.92 (server)", "19.25 (client)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("runs show's segments lack %q", want)
		}
	}

	var text bytes.Buffer
	Summary(&text, rep)
	out := text.String()
	for _, row := range []string{"send buffer full %", "send buffer empty %", "send buffer fill bytes", "recv calls/2MiB mean ± σ"} {
		if c := summaryCell(t, out, row); c != model.NA {
			t.Errorf("run's summary: A's %q is %q; want n/a", row, c)
		}
	}
	if c := summaryCell(t, out, "client recv calls/2MiB"); c != "8.9" && !strings.HasPrefix(c, "9.") {
		t.Errorf("run's summary: A's client recv calls/2MiB %q: the client's own sum is gone", c)
	}
	if !strings.Contains(out, receiverChanged) {
		t.Errorf("run's summary does not say why A's figures are n/a:\n%s", out)
	}

	var csv bytes.Buffer
	if err := model.WriteRunCSV(&csv, rep); err != nil {
		t.Fatal(err)
	}
	// The interval in which A's workload changed mixed the two receivers.
	lines := strings.Split(csv.String(), "\n")
	cols := strings.Split(lines[0], ",")
	idx := map[string]int{}
	for i, c := range cols {
		idx[c] = i
	}
	changed := 0
	for _, l := range lines[1:] {
		c := strings.Split(l, ",")
		if len(c) < len(cols) || c[idx["side"]] != "A" || c[idx["settings_changed"]] != "true" || c[idx["bytes"]] == "0" {
			continue
		}
		changed++
		if c[idx["receiver"]] != "changed" || c[idx["receiver_recv_calls_per_2mib"]] != "" || c[idx["sndbuf_full_pct"]] != "" {
			t.Errorf("CSV: A's interval across a workload change reads receiver %q, calls %q, fill %q",
				c[idx["receiver"]], c[idx["receiver_recv_calls_per_2mib"]], c[idx["sndbuf_full_pct"]])
		}
	}
	if changed != 2 {
		t.Errorf("CSV: %d intervals of A across a change, want 2", changed)
	}
}

// summaryCell is side A's cell of a row of run's summary table.
func summaryCell(t *testing.T, out, row string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, row+" "); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatalf("no row %q in:\n%s", row, out)
	return ""
}
