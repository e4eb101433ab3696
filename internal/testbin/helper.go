package testbin

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Roles is the TestMain of a package whose tests start their own binary
// again as a helper process (HelperCommand): when the variable env names
// one of roles, the binary is that helper and exits with its status;
// otherwise it runs the tests.
func Roles(m *testing.M, env string, roles map[string]func() int) {
	if role, ok := roles[os.Getenv(env)]; ok {
		os.Exit(role())
	}
	os.Exit(m.Run())
}

// HelperCommand is the test binary bin (os.Args[0], or a
// WorldExecutableCopy of it) started again as the helper role that the
// variable env selects (Roles), with the variables extra ("NAME=value")
// added; it runs no test. It starts in bin's directory, which a
// WorldExecutableCopy lets any user enter (a test's own directory may
// not be).
func HelperCommand(bin, env, role string, extra ...string) *exec.Cmd {
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs // cmd.Dir must not change what a relative path names
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(append(os.Environ(), env+"="+role), extra...)
	return cmd
}

// Start starts cmd, which is killed (and reaped) when the test ends.
func Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// LineWait bounds how long Helper.Line waits for a helper's next line.
const LineWait = 2 * time.Minute

// Helper is a running helper process that a test talks to in lines: down
// its stdin, back from its stdout.
type Helper struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser
	out   *bufio.Reader
}

// StartHelper starts cmd (a HelperCommand) with pipes to its stdin and
// from its stdout, its stderr the test's own. It is killed when the test
// ends.
func StartHelper(t testing.TB, cmd *exec.Cmd) *Helper {
	t.Helper()
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	Start(t, cmd)
	return &Helper{Cmd: cmd, Stdin: stdin, out: bufio.NewReader(stdout)}
}

// Line is the helper's next line, without its line end. The test fails
// when the helper ends first or says nothing for LineWait.
func (h *Helper) Line(t testing.TB) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := h.out.ReadString('\n')
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("helper: %v (read %q)", r.err, r.s)
		}
		return strings.TrimSpace(r.s)
	case <-time.After(LineWait):
		t.Fatalf("helper said nothing for %v", LineWait)
	}
	return ""
}
