package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateGoldenEnv regenerates the golden files of this package's tests:
// NBDSCOPE_UPDATE_GOLDEN=1 go test ./cmd/nbdscope/ -run Golden
const updateGoldenEnv = "NBDSCOPE_UPDATE_GOLDEN"

// checkGolden compares got with testdata/name, showing the first line
// that differs.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv(updateGoldenEnv) == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with %s=1)", err, updateGoldenEnv)
	}
	if got == string(want) {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("%s differs at line %d:\n got: %q\nwant: %q\n(regenerate with %s=1 if the change is meant)", path, i+1, gl, wl, updateGoldenEnv)
		}
	}
}
