// Package funclen measures the length of Go functions, for the project's
// bar "no function outside tests longer than 80 lines, except table
// literals" (issue 12). Its test walks the module and fails on any
// function over the limit, so the bar stays kept.
package funclen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Limit is the longest a function may be, in lines, table literals not
// counted.
const Limit = 80

// Func is one function and its length.
type Func struct {
	File  string // path relative to the root, slash-separated
	Name  string // "Recv.Name" for a method, "Name" for a function
	Line  int    // where it starts
	Lines int    // its length, table literals not counted
}

// Key names the function as "file:Name", stable across edits that move it.
func (f Func) Key() string { return f.File + ":" + f.Name }

// Measure returns the length of every function declared in src (a Go
// file's text), named as in file. A function's length runs from its func
// line to its closing brace; the lines inside a table literal (a
// multi-line composite literal of slice, array or map type) beyond its
// first are not counted, since a table grows by rows, not by logic.
func Measure(file string, src []byte) ([]Func, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Func
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Pos()).Line
		end := fset.Position(fd.End()).Line
		out = append(out, Func{
			File:  file,
			Name:  funcName(fd),
			Line:  start,
			Lines: end - start + 1 - tableLines(fset, fd.Body),
		})
	}
	return out, nil
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// tableLines counts the lines of n's outermost table literals beyond
// their first line.
func tableLines(fset *token.FileSet, n ast.Node) int {
	total := 0
	ast.Inspect(n, func(x ast.Node) bool {
		cl, ok := x.(*ast.CompositeLit)
		if !ok || !isTable(cl) {
			return true
		}
		total += fset.Position(cl.End()).Line - fset.Position(cl.Pos()).Line
		return false // nested literals are part of this table
	})
	return total
}

// isTable reports whether cl is a literal of slice, array or map type:
// rows of data rather than code.
func isTable(cl *ast.CompositeLit) bool {
	switch cl.Type.(type) {
	case *ast.ArrayType, *ast.MapType:
		return true
	}
	return false
}

// Walk measures every non-test Go file under root, skipping testdata,
// vendor and hidden directories, sorted by file then line.
func Walk(root string) ([]Func, error) {
	var out []Func
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		funcs, err := Measure(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		out = append(out, funcs...)
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, err
}
