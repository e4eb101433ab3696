package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/phrase"
)

// TestClientOnlyFootnoteSaysWhy: a side whose server CPU is left out
// because one --target process serves both sides is marked client only
// with that reason, not "the server is external and not measured" (it is
// measured, but not to be split); an external target keeps that note.
func TestClientOnlyFootnoteSaysWhy(t *testing.T) {
	rep := reporttest.Report()
	shared := model.Reason{Kind: model.ReasonSharedServer}
	rep.Sides[0].Summary.Server, rep.Sides[0].Summary.ServerNA = nil, &shared
	rep.Sides[1].Summary.Server = nil
	var b bytes.Buffer
	if err := RunMarkdown(&b, "shared", rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"- \\*: client only; the server's CPU is n/a: " + phrase.ReasonLong(shared) + ".",
		"- \\*: client only; the server is external and not measured."} {
		if strings.Count(md, want) != 1 {
			t.Errorf("the footnotes lack %q once:\n%s", want, md)
		}
	}
}
