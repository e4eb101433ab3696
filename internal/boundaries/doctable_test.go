package boundaries

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// archDoc is the document whose packages table must match the module.
const archDoc = "../../docs/architecture.md"

// docRow is a package of the packages table and the imports of ours its
// row's last column names.
type docRow struct {
	pkg     string
	imports []string
}

// backquoted finds the `names` of a cell.
var backquoted = regexp.MustCompile("`([^`]+)`")

// docImports reads an "imports of ours" cell: the backquoted names before
// any ';' (what follows says what it never reaches), leaving out what a
// parenthesis says of an import ("`plot` (`Columns`: …)"). "nothing" and
// "nothing of ours" are no imports.
func docImports(cell string) []string {
	cell, _, _ = strings.Cut(cell, ";")
	var b strings.Builder
	depth := 0
	for _, r := range cell {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	var out []string
	for _, m := range backquoted.FindAllStringSubmatch(b.String(), -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// readDocTable reads the packages table: the table under "## Packages"
// whose header's last column is "imports of ours".
func readDocTable(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatalf("%s has no \"## Packages\" section", archDoc)
	}
	var rows []docRow
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		switch {
		case !inTable:
			if last := strings.TrimSpace(cells[len(cells)-1]); last != "imports of ours" {
				t.Fatalf("%s: the packages table's last column is %q, want \"imports of ours\"", archDoc, last)
			}
			inTable = true
		case strings.HasPrefix(line, "|---"):
		default:
			// A row may name several packages that import alike.
			names := backquoted.FindAllStringSubmatch(cells[0], -1)
			if names == nil {
				t.Fatalf("%s: a packages row names no package: %q", archDoc, line)
			}
			for _, n := range names {
				rows = append(rows, docRow{n[1], docImports(cells[len(cells)-1])})
			}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no packages table", archDoc)
	}
	return rows
}

// TestArchitectureTableIsTheModule: docs/architecture.md's packages table
// has a row for every package of the module and no other, and each row's
// "imports of ours" are the package's direct imports as `go list` gives
// them, for Linux and macOS together (tests' imports not counted).
func TestArchitectureTableIsTheModule(t *testing.T) {
	imports := map[string][]string{}
	for _, goos := range []string{"linux", "darwin"} {
		for pkg, imps := range listPackages(t, goos) {
			imports[pkg] = append(imports[pkg], imps...)
		}
	}
	for pkg, imps := range imports {
		slices.Sort(imps)
		imports[pkg] = slices.Compact(imps)
	}
	listed := map[string]bool{}
	for _, r := range readDocTable(t) {
		if listed[r.pkg] {
			t.Errorf("%s: %s has two rows", archDoc, r.pkg)
		}
		listed[r.pkg] = true
		real, ok := imports[r.pkg]
		if !ok {
			t.Errorf("%s lists %s, which is no package of the module", archDoc, r.pkg)
			continue
		}
		if !slices.Equal(r.imports, real) {
			t.Errorf("%s: %s's imports of ours are %s in the table, %s in go list", archDoc, r.pkg, names(r.imports), names(real))
		}
	}
	for pkg := range imports {
		if !listed[pkg] {
			t.Errorf("%s: %s (imports %s) has no row in the packages table", archDoc, pkg, names(imports[pkg]))
		}
	}
}

// names is a list of imports as a cell writes them.
func names(pkgs []string) string {
	if len(pkgs) == 0 {
		return "nothing"
	}
	q := make([]string, len(pkgs))
	for i, p := range pkgs {
		q[i] = "`" + p + "`"
	}
	return strings.Join(q, ", ")
}

// TestDocImportsReadsACell: the parser of the column keeps the imports
// and drops what parentheses and a "never" clause name.
func TestDocImportsReadsACell(t *testing.T) {
	got := docImports("`engine` (the `Controller` interface), `model`, `plot` (`Columns`: samples (as `x`) into columns); never `engine/child`")
	if want := []string{"engine", "model", "plot"}; !slices.Equal(got, want) {
		t.Errorf("docImports: %v, want %v", got, want)
	}
	if got := docImports("nothing of ours"); len(got) != 0 {
		t.Errorf("nothing of ours: %v", got)
	}
}
