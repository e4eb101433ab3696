// Package testbin holds what test packages share about the processes they
// run: building the nbdscope binary once per package, skipping (or, in CI,
// failing) a test whose external tool is missing, a test binary started
// again as a helper process (helper.go), possibly as another user
// (nobody_linux.go), a process's children, and work run on n goroutines
// at once.
package testbin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Main is a test package's TestMain: it builds the nbdscope binary into a
// new temporary directory named after prefix, stores its path in *bin, runs
// the tests, removes the binary and exits with the tests' status.
func Main(m *testing.M, prefix string, bin *string) {
	os.Exit(run(m, prefix, bin))
}

func run(m *testing.M, prefix string, bin *string) int {
	b, cleanup, err := build(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	*bin = b
	return m.Run()
}

// build compiles nbdscope/cmd/nbdscope into a new temporary directory named
// after prefix and returns the binary's path and the function that removes
// it again.
func build(prefix string) (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	bin = filepath.Join(dir, "nbdscope")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", bin, "nbdscope/cmd/nbdscope")
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("building nbdscope: %v\n%s", err, out)
	}
	return bin, cleanup, nil
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

// Need skips the test when a tool is missing, or fails it when
// NBDSCOPE_INTEROP=1 (set by .ci/run) asks for every such test to run.
// hint tells how to install it.
func Need(t testing.TB, hint string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		Tool(t, hint, tool)
	}
}

// Tool is the path of a tool the test needs; without it the test is
// skipped, or failed under NBDSCOPE_INTEROP=1, as Need does.
func Tool(t testing.TB, hint, tool string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		Require(t, fmt.Errorf("%s not installed (%s)", tool, hint))
	}
	return path
}

// Require skips the test when err says what it needs is missing here (a
// tool, a kernel mechanism, a permission), or fails it under
// NBDSCOPE_INTEROP=1, where CI has installed and mounted all of it and a
// skip would pass a test that never ran. A nil err is nothing missing.
func Require(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("NBDSCOPE_INTEROP") == "1" {
		t.Fatalf("%v; NBDSCOPE_INTEROP=1 requires it", err)
	}
	t.Skip(err)
}

// WorldExecutableCopy copies the running test binary, as name, into a new
// directory that any user may enter and run it from (a test's own binary
// usually sits where another user cannot reach it): for tests that run
// the binary again as an unprivileged user, which only root may: without
// root the test is skipped. The copy goes with the test.
func WorldExecutableCopy(t *testing.T, name string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	dir, err := os.MkdirTemp("", name+"-perm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, name+".test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// ShortDir returns a temporary directory, removed when the test ends,
// whose path is short enough for the unix sockets a test makes in it
// (sun_path holds 104 bytes on macOS, 108 on Linux; t.TempDir's path,
// named after the test, can be longer).
func ShortDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	if len(d)+len("/s.sock") < 90 {
		return d
	}
	d, err := os.MkdirTemp("", "nbd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
