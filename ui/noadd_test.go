package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The explorer shows what the engine's meter added up and adds no
// figures itself (issue 34): its panel summed its last 8 samples with
// Figures.Add beside the engine's own totals, and its pace row and fill
// legend disagreed. Every Add call in the package's code is listed here
// by its receiver, and none is of figures (plot's Columns.Add places a
// chart point).
func TestExplorerAddsNoFigures(t *testing.T) {
	allowed := map[string]bool{"cols": true} // plot.Columns
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Add" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || !allowed[id.Name] {
				t.Errorf("%s: an Add call the explorer makes itself: figures are added by the engine's meter", fset.Position(call.Pos()))
			}
			return true
		})
	}
}
