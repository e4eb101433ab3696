package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// nbdscopeBin is the binary TestMain builds.
var nbdscopeBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "nbe2e-bin-") // not nbdscope-*: that is what a leftover socket directory looks like
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	nbdscopeBin = filepath.Join(dir, "nbdscope")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", nbdscopeBin, "nbdscope/cmd/nbdscope")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building nbdscope: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// goTool finds the go command that runs this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if r := os.Getenv("GOROOT"); r != "" {
		return filepath.Join(r, "bin", "go")
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// need skips the test when a tool is missing, or fails it when
// NBDSCOPE_INTEROP=1 asks for every test to run (as interop/ does).
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			msg := fmt.Sprintf("e2e: %s not installed (apt-get install %s)", tool, tool)
			if os.Getenv("NBDSCOPE_INTEROP") == "1" {
				t.Fatalf("%s; NBDSCOPE_INTEROP=1 requires it", msg)
			}
			t.Skip(msg)
		}
	}
}
