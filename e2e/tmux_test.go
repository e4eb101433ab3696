package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/internal/testbin"
	"nbdscope/shellword"
)

// Bounds: no wait of these tests is open-ended.
const (
	tmuxTimeout = 10 * time.Second       // any one tmux command
	waitTimeout = 20 * time.Second       // any one wait for the screen
	pollEvery   = 200 * time.Millisecond // screen polls
)

// term is the explorer running in a private tmux server: its own socket
// (-L), no configuration file of the user's (-f), one session "s" of one
// pane whose shell runs nbdscope and records its exit status.
type term struct {
	t          *testing.T
	w, h       int
	sock       string // tmux -L name
	sockPath   string // the server's socket file, removed at the end
	dir        string // private: tmux.conf, NBDSCOPE_HOME, TMPDIR of nbdscope
	tmpDir     string // TMPDIR of nbdscope: its socket directory goes here
	pid        int    // the explorer's process (0 without /proc)
	statusFile string // its exit status, once it exited
	fitErrs    int    // screens found wider or taller than the pane
	last       string // the last screen captured, for failure messages
}

var termSeq int

// startTerm starts `nbdscope` in a w×h pane. Everything it starts is
// ended in t.Cleanup, whether the test passed or not.
func startTerm(t *testing.T, w, h int, args ...string) *term {
	t.Helper()
	need(t, "tmux")
	// Short: the socket paths of nbdscope's sides live under it.
	dir, err := os.MkdirTemp("", "nbe2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // runs last
	termSeq++
	tm := &term{
		t: t, w: w, h: h, dir: dir,
		sock:   fmt.Sprintf("nbdscope-e2e-%d-%d-%s", os.Getpid(), termSeq, filepath.Base(dir)),
		tmpDir: filepath.Join(dir, "tmp"),
	}
	home := filepath.Join(dir, "home")
	for _, d := range []string{tm.tmpDir, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// remain-on-exit keeps the pane (and the server) after nbdscope
	// exits, so that the screen can still be read; /bin/sh runs the
	// pane's command whatever the user's shell.
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g default-shell /bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tm.kill)

	tm.statusFile = filepath.Join(dir, "status")
	cmd := shellword.Join(append([]string{"env", "TMPDIR=" + tm.tmpDir, "NBDSCOPE_HOME=" + home, nbdscopeBin}, args...))
	cmd += "; echo $? >" + shellword.Join([]string{tm.statusFile})
	if _, err := tm.tmuxErr("-f", conf, "new-session", "-d", "-s", "s",
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmd); err != nil {
		t.Fatalf("starting tmux: %v", err)
	}
	tm.sockPath = strings.TrimSpace(tm.tmux("display", "-p", "-t", "s", "#{socket_path}"))
	out := strings.Fields(tm.tmux("display", "-p", "-t", "s", "#{pane_width} #{pane_height}"))
	if len(out) != 2 || out[0] != strconv.Itoa(w) || out[1] != strconv.Itoa(h) {
		t.Fatalf("pane is %q, want %dx%d", out, w, h)
	}
	// The explorer: the process of the binary that is not a child role,
	// this terminal's own (its TMPDIR is unique to it: an explorer a test
	// before this one stopped may still be on its way out), and not
	// started by the binary: a child between its fork and its exec still
	// shows the explorer's command line and environment, and signalling
	// that one instead killed a side's server (TestHangup, a loaded CI).
	if haveProc() {
		deadline := time.Now().Add(waitTimeout)
		for tm.pid == 0 {
			for _, p := range binProcs() {
				if p.nbdscope && !strings.Contains(p.cmdline, " __child ") && hasEnv(p.pid, "TMPDIR="+tm.tmpDir) &&
					!startedByBin(p.pid) {
					tm.pid = p.pid
				}
			}
			if tm.pid == 0 && time.Now().After(deadline) {
				t.Fatalf("nbdscope did not start within %v: %v", waitTimeout, binProcs())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return tm
}

// tmuxErr runs a tmux command against the private server.
func (tm *term) tmuxErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-L", tm.sock}, args...)...)
	// Not the user's tmux: no $TMUX to follow.
	cmd.Env = withoutEnv(os.Environ(), "TMUX", "TMUX_PANE")
	cmd.WaitDelay = time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("tmux %s: timed out after %v", strings.Join(args, " "), tmuxTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := tm.tmuxErr(args...)
	if err != nil {
		tm.t.Fatalf("%v\nlast screen:\n%s", err, tm.last)
	}
	return out
}

// keys sends tmux key names ("2", "C", "Enter", "Escape").
func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	tm.tmux(append([]string{"send-keys", "-t", "s"}, keys...)...)
}

// typeText types s literally.
func (tm *term) typeText(s string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", "s", "-l", "--", s)
}

// capture returns the pane's screen, one string per row, and checks that
// it fits the pane.
func (tm *term) capture() []string {
	tm.t.Helper()
	out := tm.tmux("capture-pane", "-p", "-t", "s")
	out = strings.TrimSuffix(out, "\n")
	tm.last = out
	rows := strings.Split(out, "\n")
	tm.checkFits(rows)
	return rows
}

// checkFits reports (once) a screen with more rows than the pane or a row
// wider than it.
func (tm *term) checkFits(rows []string) {
	tm.t.Helper()
	if tm.fitErrs > 0 {
		return
	}
	if len(rows) > tm.h {
		tm.fitErrs++
		tm.t.Errorf("%dx%d: captured %d rows:\n%s", tm.w, tm.h, len(rows), strings.Join(rows, "\n"))
	}
	for i, r := range rows {
		if n := ansi.StringWidth(r); n > tm.w {
			tm.fitErrs++
			tm.t.Errorf("%dx%d: row %d is %d cells wide: %q", tm.w, tm.h, i, n, r)
		}
	}
}

// waitFor polls the screen until cond holds, up to waitTimeout, and
// returns that screen; it fails the test with the last screen otherwise.
func (tm *term) waitFor(what string, cond func(rows []string) bool) []string {
	tm.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		rows := tm.capture()
		if cond(rows) {
			return rows
		}
		if done, status := tm.exited(); done {
			tm.t.Fatalf("waiting for %s: nbdscope exited (%s); last screen:\n%s", what, status, tm.last)
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("%dx%d: no %s after %v; last screen:\n%s", tm.w, tm.h, what, waitTimeout, tm.last)
		}
		time.Sleep(pollEvery)
	}
}

// waitForData waits until either panel shows data moving (a rate above
// 0) and returns that screen.
func (tm *term) waitForData() []string {
	tm.t.Helper()
	return tm.waitFor("data moving", func(rows []string) bool {
		p, err := panels(rows, tm.w)
		return err == nil && (p[0].rate > 0 || p[1].rate > 0)
	})
}

// exited reports whether nbdscope exited and how ("exit status N"): the
// pane's shell waits for it and writes its status to a file. (tmux's own
// #{pane_dead_status} is not reliable: tmux 3.3 sometimes leaves the
// pane's process unreaped, a zombie, for good.)
func (tm *term) exited() (bool, string) {
	b, err := os.ReadFile(tm.statusFile)
	if err != nil || !strings.HasSuffix(string(b), "\n") {
		return false, ""
	}
	return true, "exit status " + strings.TrimSpace(string(b))
}

// waitExit waits (bounded) for nbdscope to exit and returns how it ended
// ("exit status 0", …).
func (tm *term) waitExit() string {
	tm.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		if done, status := tm.exited(); done {
			return status
		}
		if time.Now().After(deadline) {
			if out, err := tm.tmuxErr("capture-pane", "-p", "-t", "s"); err == nil {
				tm.last = out
			}
			tm.t.Fatalf("nbdscope still running %v after q; processes %v; screen:\n%s", waitTimeout, binProcs(), tm.last)
		}
		time.Sleep(pollEvery)
	}
}

// kill ends the tmux server and any process of the built binary still
// running (the explorer or its children), and removes the server's socket.
// Every process it kills has the binary's unique path in its command line.
func (tm *term) kill() {
	if _, err := tm.tmuxErr("kill-server"); err != nil && !strings.Contains(err.Error(), "no server running") &&
		!strings.Contains(err.Error(), "error connecting") {
		tm.t.Logf("kill-server: %v", err)
	}
	if tm.sockPath != "" {
		os.Remove(tm.sockPath)
	}
	// SIGHUP from tmux normally ends the explorer, which ends its
	// children; give them a moment, then kill what is left.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := binProcs()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				tm.t.Logf("killing leftover %d: %s", p.pid, p.cmdline)
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type proc struct {
	pid      int
	cmdline  string
	nbdscope bool // the binary itself (argv[0]), not e.g. the tmux server
}

// binProcs lists the running processes whose command line holds the
// binary this test built (its path is unique to this test run): the
// explorer, its children, and the tmux server started to run it. Without
// /proc it returns nil.
func binProcs() []proc {
	var ps []proc
	for _, p := range testbin.ProcsWith(nbdscopeBin) {
		ps = append(ps, proc{pid: p.PID, cmdline: p.CmdLine(), nbdscope: p.Argv[0] == nbdscopeBin})
	}
	return ps
}

// startedByBin reports whether process pid's parent is the binary this
// test built (a child of the explorer), or pid is gone.
func startedByBin(pid int) bool {
	_, ppid, err := testbin.ProcStat(pid)
	if err != nil {
		return true
	}
	argv, err := testbin.ProcArgv(ppid)
	return err == nil && len(argv) > 0 && argv[0] == nbdscopeBin
}

// hasEnv reports whether process pid was started with the environment
// entry kv ("NAME=value").
func hasEnv(pid int, kv string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	for _, e := range strings.Split(string(b), "\x00") {
		if e == kv {
			return true
		}
	}
	return false
}

func haveProc() bool {
	_, err := os.Stat("/proc/self/cmdline")
	return err == nil
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
