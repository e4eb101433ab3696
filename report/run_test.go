package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// words is a table line as its words: a text row and a markdown row of the
// same cells read alike.
func words(line string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(line, "|", " ")), " ")
}

// run's segments and runs show's are one table (SegmentTable): for a run
// in which A changed only its client receive buffer, transport and
// placement, both name those columns, and every row of run's text is a row
// of runs show's markdown, cell for cell, and of the one table.
func TestRunAndRunsShowPrintOneSegmentsTable(t *testing.T) {
	rep := reporttest.Changes(t)
	var text, md bytes.Buffer
	Summary(&text, rep)
	if err := RunMarkdown(&md, "fixture", rep); err != nil {
		t.Fatal(err)
	}
	tb, ok := Segments(rep.WithStamps())
	if !ok {
		t.Fatal("the fixture has no segments")
	}
	lines := strings.Split(text.String(), "\n")
	head := lastLineStarting(text.String(), "side ")
	for _, want := range []string{"client-rcvbuf", "transport", "placement", "from–to (s)", "throughput"} {
		if !strings.Contains(head, want) {
			t.Errorf("run's segments head %q lacks %q", head, want)
		}
	}
	var mdRows []string
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "|") {
			mdRows = append(mdRows, words(l))
		}
	}
	if !slices.Contains(mdRows, words(strings.Join(tb.Head, " "))) {
		t.Errorf("runs show has no segments head %q", tb.Head)
	}
	for _, row := range tb.Rows {
		want := words(strings.Join(row, " "))
		if !slices.ContainsFunc(lines, func(l string) bool { return words(l) == want }) {
			t.Errorf("run lacks the segment row %q:\n%s", want, text.String())
		}
		if !slices.Contains(mdRows, want) {
			t.Errorf("runs show lacks the segment row %q:\n%s", want, md.String())
		}
	}
	// The row of A's tcp stretch says what it ran with.
	var textRow string
	for _, l := range lines {
		if strings.HasPrefix(l, "A ") && strings.Contains(l, "4.04–5.52") {
			textRow = words(l)
		}
	}
	if !strings.Contains(textRow, "256k 1 split tcp") {
		t.Errorf("A's tcp stretch %q does not say what it ran with", textRow)
	}
}

// run's summary is its one table: every row of SummaryTable is a line of
// run's text.
func TestSummaryPrintsItsTable(t *testing.T) {
	rep := reporttest.Report()
	var text bytes.Buffer
	Summary(&text, rep)
	lines := strings.Split(text.String(), "\n")
	tb := SummaryTable(rep)
	if len(tb.Rows) < 20 || words(lines[0]) != "figure A B B/A" {
		t.Fatalf("summary head %q, %d rows", lines[0], len(tb.Rows))
	}
	for i, row := range tb.Rows {
		if got, want := words(lines[1+i]), words(strings.Join(row, " ")); got != want {
			t.Errorf("line %d: %q, want %q", 1+i, got, want)
		}
	}
}

// A finished run of an exec side reads as one, in the summary, the
// interval lines and runs export's markdown: it printed "B exec.run:  →
// 0.310s" (a change from nothing), and "| exec.run |  | 0.310s |".
func TestExecRunEventReadsAsARun(t *testing.T) {
	rep := reporttest.Report()
	ev := model.Event{T: 1.77, Side: "B", Setting: model.ExecRunEvent, To: "0.310s"}
	rep.Events = []model.Event{ev}
	var text, md bytes.Buffer
	Summary(&text, rep)
	if err := RunMarkdown(&md, "x", rep); err != nil {
		t.Fatal(err)
	}
	if got := md.String(); !strings.Contains(got, "| client run |") || !strings.Contains(got, "finished in 0.310s") || strings.Contains(got, "exec.run") {
		t.Errorf("markdown: want a client run row finished in 0.310s:\n%s", got)
	}
	for what, got := range map[string]string{"summary": text.String(), "intervals": EventIntervalLine(ev)} {
		if !strings.Contains(got, "client run finished in 0.310s") || strings.Contains(got, "exec.run") || !strings.Contains(got, "1.77") {
			t.Errorf("%s: %q, want client run finished in 0.310s", what, got)
		}
	}
}

// A side whose load was a real client consumed nothing of ours (Consumed
// nil, JSON null): its consume cell said "scan: 0/0 zero", as if our scan
// had found no buffers.
func TestExecSideConsumeIsNotMeasured(t *testing.T) {
	sm := model.Summary{}
	sm.Consume = model.ConsumeScan
	sm.Settings.Exec = "qemu-img convert {uri} x"
	if got := consumeText(sm); got != "n/a (a real client was the load)" {
		t.Errorf("exec side's consume cell %q, want n/a (a real client was the load)", got)
	}
	sm.Settings.Exec = ""
	sm.Consumed = &model.ConsumeCounts{ScannedBuffers: 10, ZeroBuffers: 2}
	if got := consumeText(sm); got != "scan: 2/10 zero" {
		t.Errorf("our load's consume cell %q, want scan: 2/10 zero", got)
	}
}

// A run too short for B's first alternate-mode turn ('run -t 2 -i 0.5':
// turns of 2 s) printed a column of n/a for B and "0 B / 0.0s", and said
// nothing of why; now a line says B never ran, why, and what to give.
func TestSideThatNeverRanSaysWhy(t *testing.T) {
	rep := reporttest.Report()
	rep.Config.Mode = model.ModeAlternate
	rep.Config.Interval = model.Duration(500 * time.Millisecond)
	rep.Config.Duration = model.Duration(2 * time.Second)
	rep.Sides[1].Summary = model.Summary{}
	var text bytes.Buffer
	Summary(&text, rep)
	want := "B never ran: in alternate mode the sides take turns of 2s (4 intervals of 500ms, at least 1s) and the 2s run ended before B's turn; run at least 4s (-t 4), or --mode concurrent"
	if !strings.Contains(text.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, text.String())
	}
	if strings.Contains(text.String(), "A never ran") {
		t.Error("A ran, yet the summary says it never did")
	}
}

// An exec side's request errors are not seen (Errors nil, JSON null): its
// cell said 0.
func TestExecSideErrorsNotMeasured(t *testing.T) {
	sm := model.Summary{}
	sm.Settings.Exec = "qemu-img convert {uri} x"
	if got := errorsText(sm); !strings.HasPrefix(got, "n/a") {
		t.Errorf("exec side's errors cell %q, want n/a", got)
	}
	saved := uint64(0)
	sm.Errors = &saved // a run saved before errors could be null
	if got := errorsText(sm); !strings.HasPrefix(got, "n/a") {
		t.Errorf("a saved exec side's errors 0: cell %q, want n/a", got)
	}
	sm.Errors = nil
	sm.Settings.Exec = ""
	zero := uint64(0)
	sm.Errors = &zero // our load's requests are seen: 0 failed
	if got := errorsText(sm); got != "0" {
		t.Errorf("our load's errors cell %q, want 0", got)
	}
}

// lastLineStarting is the last line of text that starts with prefix ("":
// none does): a table's row by its label.
func lastLineStarting(text, prefix string) string {
	var row string
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, prefix) {
			row = strings.TrimSuffix(l, "\n")
		}
	}
	return row
}

// A no-op change reads as one in the summary, the markdown and the
// interval line; a side whose payload was assumed (a real client against
// a real server) says so in its payload row.
func TestNoOpAndAssumedPayloadRead(t *testing.T) {
	rep := reporttest.Report()
	ev := model.Event{T: 3.03, Side: "B", Setting: model.SetSndBuf, From: "2m", To: "2m", NoOp: true}
	rep.Events = []model.Event{ev}
	rep.Sides[1].Summary.PayloadAssumed = true
	var text, md bytes.Buffer
	Summary(&text, rep)
	if err := RunMarkdown(&md, "x", rep); err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]string{"summary": text.String(), "markdown": md.String(), "intervals": EventIntervalLine(ev)} {
		if !strings.Contains(got, "(no-op: already in force)") {
			t.Errorf("%s does not mark the change a no-op:\n%s", what, got)
		}
	}
	if !strings.Contains(text.String(), "(assumed: an export a client run)") {
		t.Errorf("the summary's payload row does not say B's payload is assumed:\n%s", text.String())
	}
}
