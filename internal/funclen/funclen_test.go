package funclen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// knownLong are functions over the limit that their owners are rewriting
// now ("file:Name"); each must still be over it, so the list only shrinks.
var knownLong = map[string]bool{}

// TestNoLongFunctions keeps the bar of issue 12: no function outside tests
// longer than Limit lines, table literals not counted.
func TestNoLongFunctions(t *testing.T) {
	root := moduleRoot(t)
	fs, err := Walk(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) < 100 {
		t.Fatalf("measured only %d functions under %s: the walk is broken", len(fs), root)
	}
	long := map[string]bool{}
	for _, f := range fs {
		if f.Lines <= Limit {
			continue
		}
		long[f.Key()] = true
		if !knownLong[f.Key()] {
			t.Errorf("%s:%d: %s is %d lines, over the limit of %d (table literals not counted): split it into functions that each do one job",
				f.File, f.Line, f.Name, f.Lines, Limit)
		}
	}
	for k := range knownLong {
		if !long[k] {
			t.Errorf("%s is no longer over the limit (or gone): drop it from knownLong", k)
		}
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

// TestMeasure: lengths run from the func line to the closing brace;
// table literals (slice, array and map) count one line, struct literals
// and function literals count in full; methods are named by receiver.
func TestMeasure(t *testing.T) {
	src := `package p

func short() {}

func (r *Recv[T]) method() int {
	x := 1
	return x
}

func table() []int {
	return []int{
		1,
		2,
		3,
	}
}

func nested() map[string][]int {
	m := map[string][]int{
		"a": {1,
			2},
		"b": nil,
	}
	return m
}

func structLit() S {
	return S{
		A: 1,
		B: 2,
	}
}

func closure() {
	f := func() {
		_ = 1
	}
	f()
}
`
	fs, err := Measure("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"short":       1,
		"Recv.method": 4,
		"table":       3, // func, return []int{ … }, }
		"nested":      4,
		"structLit":   6,
		"closure":     6,
	}
	if len(fs) != len(want) {
		t.Fatalf("measured %d functions, want %d: %+v", len(fs), len(want), fs)
	}
	for _, f := range fs {
		if w, ok := want[f.Name]; !ok || f.Lines != w {
			t.Errorf("%s: %d lines, want %d", f.Name, f.Lines, w)
		}
	}
	if _, err := Measure("bad.go", []byte("package p\nfunc (")); err == nil {
		t.Error("a file that does not parse measured without an error")
	}
}

// TestWalkSkipsTests: test files and testdata are not measured.
func TestWalkSkipsTests(t *testing.T) {
	dir := t.TempDir()
	long := "package p\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", Limit+5) + "}\n"
	for _, name := range []string{"a_test.go", "testdata/b.go", ".hidden/c.go", "d.go"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(long), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := Walk(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].File != "d.go" || fs[0].Lines != Limit+7 {
		t.Errorf("Walk = %+v, want only d.go's long at %d lines", fs, Limit+7)
	}
}
