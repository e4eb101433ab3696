package interop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/nbd"
	"nbdscope/shellword"
)

// result is what an external command did.
type result struct {
	cmdline string
	out     string // stdout and stderr, interleaved
	code    int    // exit status
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\n[exit %d]\n%s", r.cmdline, r.code, r.out)
}

// run runs an external command in dir ("" = the test's directory) with a
// timeout and returns its combined output and exit status. A command that
// cannot start or times out fails the test.
func run(t testing.TB, dir, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := result{cmdline: shellword.Join(append([]string{name}, args...)), out: string(out)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("timed out after %v:\n%s", time.Since(start).Round(time.Millisecond), r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", r.cmdline, err)
	}
	return r
}

// mustRun is run that fails the test unless the command exits 0.
func mustRun(t testing.TB, dir, name string, args ...string) result {
	t.Helper()
	r := run(t, dir, name, args...)
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	return r
}

// waitOutput waits until p's output holds a whole line containing want
// and returns the output so far. The wait is bounded by cmdTimeout and by
// p's life: output that never comes fails the test, never passes as empty.
func waitOutput(t testing.TB, p *proc, want string) string {
	t.Helper()
	deadline := time.After(cmdTimeout)
	for exited := false; ; {
		out := p.out.String()
		if i := strings.Index(out, want); i >= 0 && strings.Contains(out[i:], "\n") {
			return out
		}
		if exited { // its output is complete
			t.Fatalf("%s exited (%v) before writing %q:\n%s", p.cmdline, p.waitErr, want, out)
		}
		select {
		case <-p.exited:
			exited = true
		case <-deadline:
			t.Fatalf("%s did not write %q within %v:\n%s", p.cmdline, want, cmdTimeout, p.out)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// proc is a server running as a child process.
type proc struct {
	name    string
	cmdline string
	cmd     *exec.Cmd
	out     *testbin.SyncBuffer
	exited  chan struct{} // closed when Wait returned
	waitErr error
	spec    procSpec
	cancel  func()
	stopped bool
}

// stop ends the server: SIGTERM, up to stopTimeout, then SIGKILL. For
// nbdscope it checks the clean exit (status 0) and the removal of the socket
// file.
// cleanup is true when called at the end of the test, where an earlier
// exit is an error.
func (p *proc) stop(t testing.TB, cleanup bool) {
	t.Helper()
	if p.stopped {
		return
	}
	p.stopped = true
	defer p.cancel()
	select {
	case <-p.exited:
		if cleanup {
			t.Errorf("%s exited before the end of the test (%v):\n%s", p.cmdline, p.waitErr, p.out)
			return
		}
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not exit within %v of SIGTERM; killed. Output:\n%s", p.cmdline, stopTimeout, p.out)
		return
	}
	if p.spec.ours {
		if p.waitErr != nil {
			t.Errorf("%s: after SIGTERM want exit status 0, got %v. Output:\n%s", p.cmdline, p.waitErr, p.out)
		}
		if p.spec.network == "unix" {
			if _, err := os.Lstat(p.spec.address); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: socket %s still there after a clean exit (lstat: %v)", p.cmdline, p.spec.address, err)
			}
		}
	}
	if t.Failed() {
		t.Logf("output of %s:\n%s", p.cmdline, p.out)
	}
}

type procSpec struct {
	name string
	args []string
	// network and address the server accepts connections on when ready.
	network, address string
	// ours: the child is nbdscope serve, so a clean exit after SIGTERM is
	// required (status 0) and, for a unix socket, the socket file must be
	// gone afterwards.
	ours bool
}

// startProc starts a server, waits (bounded) until it accepts connections
// and registers its shutdown: SIGTERM, up to stopTimeout, then SIGKILL.
// For nbdscope serve on TCP port 0 (spec.address "HOST:0"), the address is
// the one the server says it listens on, and p.spec.address holds it.
func startProc(t testing.TB, spec procSpec) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procLifetime)
	cmd := exec.CommandContext(ctx, spec.name, spec.args...)
	out := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = stopTimeout
	// Should the test binary die, take the server along (Linux).
	cmd.SysProcAttr = childProcAttr()
	p := &proc{name: filepath.Base(spec.name), cmdline: shellword.Join(append([]string{spec.name}, spec.args...)), cmd: cmd, out: out, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", p.cmdline, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	p.spec, p.cancel = spec, cancel
	t.Cleanup(func() { p.stop(t, true) })

	if spec.ours && spec.network == "tcp" && strings.HasSuffix(spec.address, ":0") {
		spec.address = boundAddr(t, p)
		p.spec.address = spec.address
	}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.exited:
			p.stopped = true
			p.cancel()
			t.Fatalf("%s exited during startup (%v):\n%s", p.cmdline, p.waitErr, out)
		default:
		}
		c, err := net.DialTimeout(spec.network, spec.address, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			p.stopped = true
			p.cmd.Process.Kill()
			<-p.exited
			p.cancel()
			t.Fatalf("%s: %s %s does not accept connections after %v (%v). Output:\n%s",
				p.cmdline, spec.network, spec.address, startTimeout, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// server is an `nbdscope serve` child.
type server struct {
	*proc
	dir  string // short temporary directory holding the socket
	sock string
	// uri reaches the export; name is the export name.
	uri, name string
}

// startServe runs `nbdscope serve -k DIR/s.sock --backend memory --size 64m`
// with extra flags appended (later flags override earlier ones).
func startServe(t testing.TB, extra ...string) *server {
	t.Helper()
	dir := testbin.ShortDir(t)
	sock := filepath.Join(dir, "s.sock")
	args := append([]string{"serve", "-k", sock, "--backend", "memory", "--size", "64m"}, extra...)
	name := flagValue(extra, "--export", "-x")
	p := startProc(t, procSpec{name: nbdscopeBin, args: args, network: "unix", address: sock, ours: true})
	return &server{proc: p, dir: dir, sock: sock, name: name, uri: unixURI(sock, name)}
}

// flagValue returns the last value given for any of names in args.
func flagValue(args []string, names ...string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		for _, n := range names {
			if args[i] == n && i+1 < len(args) {
				v = args[i+1]
			}
			if strings.HasPrefix(args[i], n+"=") {
				v = strings.TrimPrefix(args[i], n+"=")
			}
		}
	}
	return v
}

// unixURI is nbd+unix:///NAME?socket=SOCK.
func unixURI(sock, export string) string {
	return "nbd+unix:///" + url.PathEscape(export) + "?socket=" + sock
}

// boundAddr returns the HOST:PORT that the nbdscope serve child p says it
// listens on ("nbdscope serve: listening on nbd://HOST[:PORT]/"), so a test
// can have it bind port 0 instead of guessing a free port (a port found free
// and closed again can be taken before the child binds it).
func boundAddr(t testing.TB, p *proc) string {
	t.Helper()
	const prefix = "nbdscope serve: listening on "
	out := waitOutput(t, p, prefix)
	line := out[strings.Index(out, prefix)+len(prefix):]
	line = strings.TrimSpace(line[:strings.IndexByte(line, '\n')])
	u, err := nbd.ParseURI(line)
	if err != nil || u.Transport != "tcp" || u.Port == 0 {
		t.Fatalf("%s: cannot tell the address from %q (%v):\n%s", p.cmdline, line, err, out)
	}
	return net.JoinHostPort(u.Host, strconv.Itoa(u.Port))
}
