// Package wordcheck holds the test that keeps warnings worded in one
// place: no file of engine/ or model/ words a warning where it raises it
// (issue 34). A warning is a kind with typed parameters (model.Warning's
// What); the phrasebook, package phrase, words it.
package wordcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"nbdscope/model"
)

// knownWorded are the files that may still raise warnings worded in
// place: none. Every warning is raised as its kind's parameters and worded
// by package phrase; a new worded one fails below.
var knownWorded = map[string]bool{}

// TestNoWarningWordedWhereRaised fails on a model.Warning literal that
// sets its Text or Fix or holds a sentence (a string literal, fmt.Sprintf),
// on warning parameters that hold one, and on a call of the worded warn
// outside knownWorded.
func TestNoWarningWordedWhereRaised(t *testing.T) {
	root := moduleRoot(t)
	params := paramTypes()
	calls := map[string]bool{}
	files := 0
	for _, dir := range []string{"engine", "model"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			files++
			for _, v := range check(t, path, params, func() { calls[rel] = true }) {
				if !(v.legacyCall && knownWorded[rel]) {
					t.Errorf("%s:%d: %s", rel, v.line, v.what)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("read only %d files: the walk is broken", files)
	}
	for f := range knownWorded {
		if !calls[f] {
			t.Errorf("%s no longer raises a worded warning: drop it from knownWorded", f)
		}
	}
}

type violation struct {
	line       int
	what       string
	legacyCall bool
}

// paramTypes are the names of the warning parameter types (model.Clamped …).
func paramTypes() map[string]bool {
	names := map[string]bool{}
	for _, k := range model.WarnKinds() {
		names[reflect.TypeOf(model.ParamsOf(k)).Elem().Name()] = true
	}
	return names
}

// check walks one file. legacy is called for each call of the worded warn.
func check(t *testing.T, path string, params map[string]bool, legacy func()) []violation {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []violation
	add := func(n ast.Node, what string, legacyCall bool) {
		out = append(out, violation{fset.Position(n.Pos()).Line, what, legacyCall})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			// The worded warn itself, and reading a saved warning
			// back, are the places that may set Text.
			return n.Recv == nil || n.Name.Name != "warn" && n.Name.Name != "UnmarshalJSON"
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "warn" && len(n.Args) == 4 {
				legacy()
				add(n, "a warning worded where it is raised (warn): raise its kind's parameters, and word it in package phrase", true)
			}
		case *ast.CompositeLit:
			name := typeName(n.Type)
			switch {
			case name == "Warning":
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && (isKey(kv, "Text") || isKey(kv, "Fix")) {
						add(kv, "a model.Warning with its "+kv.Key.(*ast.Ident).Name+" set where it is raised: give its parameters (What), package phrase words them", false)
					}
				}
			case params[name]:
				for _, e := range n.Elts {
					if v := valueOf(e); isSentence(v) {
						add(v, "warning parameters "+name+" hold a sentence: word it in package phrase", false)
					}
				}
			}
		}
		return true
	})
	return out
}

// typeName is the name of a literal's type, without its package.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.StarExpr:
		return typeName(x.X)
	}
	return ""
}

func isKey(kv *ast.KeyValueExpr, name string) bool {
	id, ok := kv.Key.(*ast.Ident)
	return ok && id.Name == name
}

func valueOf(e ast.Expr) ast.Expr {
	if kv, ok := e.(*ast.KeyValueExpr); ok {
		return kv.Value
	}
	return e
}

// isSentence tells a worded value: a string literal of more than one
// word, or a fmt.Sprintf (or string concatenation holding either).
func isSentence(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING && strings.Contains(x.Value, " ")
	case *ast.BinaryExpr:
		return isSentence(x.X) || isSentence(x.Y)
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Sprint") {
				return true
			}
		}
	}
	return false
}

// TestTheCheckFindsWordedWarnings: the check finds each way of wording a
// warning at the place it is raised, and passes the typed ones.
func TestTheCheckFindsWordedWarnings(t *testing.T) {
	src := `package engine
func (p *Pair) a() {
	p.warn(s.id, model.WarnClamp, fmt.Sprintf("side %s: clamped", s.name), "")
	p.emit(model.Update{Warning: &model.Warning{Side: s.id, Kind: model.WarnCores, Text: "this machine has 2 cores"}})
	p.raise(model.Warn(s.id, model.ScriptFailed{Change: fmt.Sprintf("%v", ch), Err: "it failed to apply"}))
	p.raise(model.Warn(s.id, model.TurnFailed{Pause: true, Err: err.Error()}))
	p.raise(model.Warn(s.id, model.ConsumeNotChanged{Setting: "hash-threads", Value: 4}))
}
`
	path := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	vs := check(t, path, paramTypes(), func() { n++ })
	lines := map[int]int{}
	for _, v := range vs {
		lines[v.line]++
	}
	if n != 1 || lines[3] != 1 || lines[4] != 1 || lines[5] != 2 || len(vs) != 4 {
		t.Errorf("found %+v (%d worded warn calls): want line 3's warn, line 4's Text, line 5's two sentences, nothing else", vs, n)
	}
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
