package docscheck

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"nbdscope/model"
)

// docCSVColumns reads docs/cli.md's table of the CSV's figure columns
// (the table after "The figure columns, in order:"): each row's
// backquoted names in its first cell, "`client_…`, `server_…`: a, b"
// standing for client_a, client_b, then server_a, server_b.
func docCSVColumns(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "The figure columns, in order:")
	if !ok {
		t.Fatal("docs/cli.md: no \"The figure columns, in order:\" table")
	}
	name := regexp.MustCompile("`([^`]+)`")
	var cols []string
	started := false
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		if cell == "columns" || strings.HasPrefix(cell, "---") {
			continue
		}
		owners, figures, each := strings.Cut(cell, ":")
		if !each {
			for _, m := range name.FindAllStringSubmatch(cell, -1) {
				cols = append(cols, m[1])
			}
			continue
		}
		for _, o := range name.FindAllStringSubmatch(owners, -1) {
			for _, f := range name.FindAllStringSubmatch(figures, -1) {
				cols = append(cols, strings.TrimSuffix(o[1], "…")+f[1])
			}
		}
	}
	return cols
}

// TestCSVColumnsDocumented: docs/cli.md lists the CSV's figure columns
// as the CSV writes them (model.FigureCSVHeader: the table of figures and
// the settings around it), in order, none missing: an entry added to the
// table of figures needs its line there.
func TestCSVColumnsDocumented(t *testing.T) {
	doc, real := docCSVColumns(t), model.FigureCSVHeader()
	if !slices.Equal(doc, real) {
		for _, c := range real {
			if !slices.Contains(doc, c) {
				t.Errorf("docs/cli.md's CSV columns lack %s", c)
			}
		}
		for _, c := range doc {
			if !slices.Contains(real, c) {
				t.Errorf("docs/cli.md lists %s, which the CSV does not write", c)
			}
		}
		t.Errorf("docs/cli.md's CSV columns, in order:\n%s\nthe CSV's:\n%s", strings.Join(doc, ","), strings.Join(real, ","))
	}
}
