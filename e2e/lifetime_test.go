package e2e

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/shellword"
)

// Issue 33: nothing nbdscope starts outlives it. Each test runs nbdscope
// with TMPDIR in a directory of its own whose path is a marker no other
// test uses: the sockets, the real servers' command lines and a copy of
// sleep named after it all carry it, so a scan of /proc for the marker
// finds whatever this test's nbdscope left, whatever other tests run
// beside it, and the directory shows what was left in TMPDIR.

// leftWait bounds how long what nbdscope started may take to go after it
// ended: a group's grace (2 s) and the janitor's scan, with room for a
// loaded machine.
const leftWait = 10 * time.Second

// lifetime is one test's marked directory: TMPDIR for nbdscope, and a
// copy of sleep whose path carries the marker.
type lifetime struct {
	marker, tmp, sleep string
}

func newLifetime(t *testing.T) lifetime {
	t.Helper()
	if !haveProc() {
		t.Skip("e2e: needs /proc to find what was left running")
	}
	base, err := os.MkdirTemp("", "nblife-")
	if err != nil {
		t.Fatal(err)
	}
	lt := lifetime{marker: base, tmp: filepath.Join(base, "tmp"), sleep: filepath.Join(base, "sleep")}
	t.Cleanup(func() {
		for _, p := range testbin.ProcsWith(lt.marker) {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
		os.RemoveAll(base)
	})
	if err := os.Mkdir(lt.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep in PATH")
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lt.sleep, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return lt
}

// started is nbdscope started by a lifetime test.
type started struct {
	cmd    *exec.Cmd
	stderr *testbin.SyncBuffer
	exited chan struct{} // closed once it has exited; err is then how
	err    error
}

// start starts nbdscope with args, TMPDIR the marked one, in a process
// group of its own (killed at the end of the test, should it still run).
func (lt lifetime) start(t *testing.T, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, nbdscopeBin, args...)
	cmd.Env = append(withoutEnv(os.Environ(), "TMPDIR"), "TMPDIR="+lt.tmp)
	cmd.Stdout = io.Discard
	p := &started{cmd: cmd, stderr: &testbin.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-p.exited })
	return p
}

// wait waits up to a minute for nbdscope's exit.
func (p *started) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(time.Minute):
		t.Fatalf("%q still ran after a minute:\n%s", p.cmd.Args, p.stderr)
		return nil
	}
}

// waitFor waits up to a minute for cond, or fails saying what.
func (p *started) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case <-p.exited:
			t.Fatalf("nbdscope exited (%v) before %s:\n%s", p.err, what, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute:\n%s", what, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkNothingLeft fails when a process carrying the marker still runs,
// or TMPDIR holds anything, leftWait after nbdscope ended.
func (lt lifetime) checkNothingLeft(t *testing.T, how string) {
	t.Helper()
	var left []testbin.Proc
	var ents []os.DirEntry
	for deadline := time.Now().Add(leftWait); ; time.Sleep(50 * time.Millisecond) {
		left = testbin.ProcsWith(lt.marker)
		ents, _ = os.ReadDir(lt.tmp)
		if (len(left) == 0 && len(ents) == 0) || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range left {
		t.Errorf("%s: still running %v after nbdscope: %s", how, leftWait, p.CmdLine())
	}
	for _, e := range ents {
		t.Errorf("%s: left in TMPDIR: %s", how, e.Name())
	}
}

// realServerIgnoringTerm is a real server whose whole group ignores
// SIGTERM: nbdscope serve (which handles it and exits), then a sleep
// that keeps the group alive. It serves TCP ({port}): the real server
// role looks for a listener bound at {socket}'s path, where serve binds
// in a private directory and renames the socket into place.
func (lt lifetime) realServerIgnoringTerm() []string {
	return []string{"--transport-b", "tcp", "--server-b", "sh -c " + shellword.Quote(`trap "" TERM INT HUP; `+
		shellword.Quote(nbdscopeBin)+` serve -p "$0"; `+shellword.Quote(lt.sleep)+` 1000`) + " {port}"}
}

// sleeping says whether the marked sleep runs.
func (lt lifetime) sleeping() bool {
	for _, p := range testbin.ProcsWith(lt.marker) {
		if p.Argv[0] == lt.sleep {
			return true
		}
	}
	return false
}

// TestRealServerIgnoringTermLeavesNothing: a real server whose group
// ignores SIGTERM is killed with its group at the end of a run, and when
// its child is killed outright (issue 33: the controller killed the child
// in the middle of the group's grace, and the group's sleep was left
// under PID 1; kill -9 of the child left the server itself).
func TestRealServerIgnoringTermLeavesNothing(t *testing.T) {
	t.Run("run ends", func(t *testing.T) {
		lt := newLifetime(t)
		p := lt.start(t, append([]string{"run", "-t", "2", "--mode", "concurrent"}, lt.realServerIgnoringTerm()...)...)
		if err := p.wait(t); err != nil {
			t.Errorf("run: %v\n%s", err, p.stderr)
		}
		lt.checkNothingLeft(t, "run -t 2")
	})
	t.Run("its child is killed", func(t *testing.T) {
		lt := newLifetime(t)
		p := lt.start(t, append([]string{"run", "-t", "30", "--mode", "concurrent"}, lt.realServerIgnoringTerm()...)...)
		// B's server child: the parent of the real server's sh (whose
		// script names the marked sleep), once sh runs nbdscope serve.
		var child int
		var server []int // sh and nbdscope serve
		p.waitFor(t, "real server", func() bool {
			for _, sh := range testbin.ProcsWith(lt.marker) {
				kids, _ := testbin.ChildPIDs(sh.PID)
				if sh.Argv[0] == "sh" && len(kids) > 0 {
					_, child, _ = testbin.ProcStat(sh.PID)
					argv, _ := testbin.ProcArgv(child)
					server = append(kids, sh.PID)
					return strings.Contains(strings.Join(argv, " "), "__child server")
				}
			}
			return false
		})
		syscall.Kill(child, syscall.SIGKILL)
		deadline := time.Now().Add(leftWait)
		for _, pid := range server {
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if argv, _ := testbin.ProcArgv(pid); alive(pid) {
				t.Errorf("the real server's %q still runs %v after kill -9 of its child", argv, leftWait)
			}
		}
		syscall.Kill(p.cmd.Process.Pid, syscall.SIGINT)
		p.wait(t)
		lt.checkNothingLeft(t, "the run after kill -9 of its server child")
	})
}

// alive says whether process pid runs (a zombie has ended).
func alive(pid int) bool {
	state, _, err := testbin.ProcStat(pid)
	return err == nil && state != 'Z'
}

// TestKilledSweepExecLeavesNothing: a sweep of a real client that forks
// (a shell with a job in the background) leaves nothing running and no
// directory in TMPDIR when it is killed outright or hung up (issue 33:
// the shell, its job and the sweep's nbdscope-exec-NNN were left).
func TestKilledSweepExecLeavesNothing(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			lt := newLifetime(t)
			client := shellword.Quote(lt.sleep) + " 1000 & wait; : {uri}"
			p := lt.start(t, "sweep", "--shell", "--exec", client, "--sndbuf", "default", "--repeat", "1", "--warmup", "0", "--bytes", "64m")
			p.waitFor(t, "client", lt.sleeping)
			syscall.Kill(p.cmd.Process.Pid, sig)
			err := p.wait(t)
			if sig == syscall.SIGHUP {
				if code := p.cmd.ProcessState.ExitCode(); code != 130 {
					t.Errorf("sweep after SIGHUP: %v (exit %d), want exit 130:\n%s", err, code, p.stderr)
				}
			}
			lt.checkNothingLeft(t, "sweep --exec after "+sig.String())
		})
	}
}
