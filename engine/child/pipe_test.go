package child

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/internal/childtest"
	"nbdscope/model"
)

// TestServerChildSurvivesBrokenPipe: a reply written after the controller
// is gone (a poll sent just before it died) must not kill the server child
// before it removes its socket. Go kills a process whose write to fd 1 hits
// a broken pipe unless SIGPIPE is caught or ignored; the child ignores it,
// sees EPIPE on the write and shuts down cleanly (exit status 1: the
// controller it reports to is gone).
func TestServerChildSurvivesBrokenPipe(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "A.sock")
	p := childtest.StartServer(t, wire.ServerSpec{Socket: sock, Settings: wire.Start{model.SetBackend: {Str: "null"}, model.SetSize: {Int: 1 << 20}, model.SetTransport: {Str: "unix"}}})
	cmd, stdin, stdout, ready := p.Cmd, p.Stdin, p.Stdout, p.Ready
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("ready (%s) but no socket: %v", ready, err)
	}
	stdout.Close() // the controller's end of the pipe is gone
	cmdLine, _ := json.Marshal(wire.Cmd{Op: "poll", Seq: 1})
	stdin.Write(append(cmdLine, '\n'))

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			t.Fatalf("server child killed by a signal (%v) instead of stopping", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server child still running 10 s after its stdout broke")
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket %s left behind (stat: %v)", sock, err)
	}
}
