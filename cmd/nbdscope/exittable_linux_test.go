package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"nbdscope/internal/testbin"
)

var reExitRow = regexp.MustCompile(`(?m)^  (\d+) +(\S.*)$`)

// helpExits are the exit statuses a command's --help lists.
func helpExits(t *testing.T, path []string) map[int]string {
	t.Helper()
	code, out, errs := runApp(t, append(append([]string(nil), path...), "--help")...)
	if code != 0 {
		t.Fatalf("%q --help: exit %d: %s", path, code, errs)
	}
	_, table, ok := strings.Cut(out, "\nExit status:\n")
	if !ok {
		t.Fatalf("%q --help has no exit table:\n%s", path, out)
	}
	codes := map[int]string{}
	for _, m := range reExitRow.FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		codes[n] = m[2]
	}
	return codes
}

// signalCases are the commands that catch SIGINT and SIGTERM, keyed by
// path. A command whose help lists 130 must be here (130 is proven, not
// promised), and one here that exits 0 must not list 130.
func signalCases(t *testing.T) map[string]signalCase {
	hasChildren := func(p *exec.Cmd, _ *testbin.SyncBuffer) bool {
		kids, _ := testbin.ChildPIDs(p.Process.Pid)
		return len(kids) > 0
	}
	sock := filepath.Join(testbin.ShortDir(t), "s.sock")
	return map[string]signalCase{
		"run":       {[]string{"run", "--duration", "60s", "--interval", "100ms", "--request-size", "256k", "--json"}, hasChildren, exitInterrupted},
		"sweep":     {[]string{"sweep", "--bytes", "64g", "--repeat", "1", "--sndbuf", "default", "--json"}, hasChildren, exitInterrupted},
		"calibrate": {[]string{"calibrate", "--bytes", "64g", "--repeat", "1", "--sndbuf", "default", "--client", "true {uri}", "--json"}, hasChildren, exitInterrupted},
		"serve":     {[]string{"serve", "-k", sock}, func(_ *exec.Cmd, e *testbin.SyncBuffer) bool { return strings.Contains(e.String(), "listening on") }, exitOK},
		// The explorer (0 on SIGINT and SIGTERM, like q) needs a terminal:
		// e2e's TestExplorerSignals proves it.
		"": {},
	}
}

// TestHelpExitTables: each command's --help lists the statuses that
// command returns, and says what they mean there (issue 21: serve --help
// promised "130 interrupted", but serve exits 0 on SIGINT). A 130 listed is
// proven by interrupting the command; a command that exits 0 on a signal
// lists no 130.
func TestHelpExitTables(t *testing.T) {
	storeCmdHome(t)
	cases := signalCases(t)
	root := newRootCmd(testApp())
	root.InitDefaultHelpCmd()
	walkCommands(root, func(path []string, _ *cobra.Command) {
		key := strings.Join(path, " ")
		codes := helpExits(t, path)
		for code := range codes {
			if code != exitOK && code != exitFailure && code != exitUsage && code != exitInterrupted {
				t.Errorf("%q --help lists %d, which no command returns", key, code)
			}
		}
		if _, ok := codes[exitUsage]; !ok {
			t.Errorf("%q --help does not list 2 (bad usage)", key)
		}
		sc, handles := cases[key]
		if _, lists := codes[exitInterrupted]; lists && (!handles || sc.want != exitInterrupted) {
			t.Errorf("%q --help lists 130, but %q is not interrupted with 130", key, key)
		}
		if handles && sc.want == exitInterrupted && codes[exitInterrupted] == "" {
			t.Errorf("%q exits 130 when interrupted, and --help does not say so", key)
		}
		if handles && sc.want == exitOK && !strings.Contains(codes[exitOK], "SIGINT") {
			t.Errorf("%q exits 0 on SIGINT and SIGTERM, and --help's 0 does not say so: %q", key, codes[exitOK])
		}
	})
}

// TestSignalExits: the statuses the help tables promise for a signal, by
// sending them: run and sweep exit 130 (what was measured is printed),
// serve exits 0 and removes its socket, for SIGINT, SIGTERM and SIGHUP
// alike (issue 33: SIGHUP killed them outright, nothing printed or
// removed).
func TestSignalExits(t *testing.T) {
	storeCmdHome(t)
	for key, sc := range signalCases(t) {
		if sc.args == nil {
			continue
		}
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			code, stdout, stderr := interrupt(t, sc, sig)
			if code != sc.want {
				t.Errorf("%q after %v: exit %d, want %d\nstderr: %s", key, sig, code, sc.want, stderr)
			}
			if key == "run" && !strings.Contains(stdout, `"partial": true`) {
				t.Errorf("run after %v printed no partial run:\n%.300s", sig, stdout)
			}
			if key == "serve" {
				if _, err := os.Lstat(sc.args[2]); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("serve -k %s after %v: the socket is still there (lstat: %v)", sc.args[2], sig, err)
				}
			}
		}
	}
}
