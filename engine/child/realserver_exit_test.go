package child

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nbdscope/clientrun"
	"nbdscope/engine/wire"
	"nbdscope/internal/testbin"
	"nbdscope/model"
)

// TestExitedFirstPrefersTheExit: a buffer refused at the start because
// the server had already exited reports the exit ("exited before it
// listened …: exit status 3"), not the refusal ("process … has exited"),
// which under CI's load was what a command that fails at once gave; a
// refusal of a live server is reported as it is.
func TestExitedFirstPrefersTheExit(t *testing.T) {
	gone := errors.New("the real server's SO_SNDBUF cannot be set: process 42 has exited")
	r := &realServerRole{argv: []string{"sh", "-c", "exit 3"}, addr: "/x.sock", fail: make(chan error, 1)}
	r.fail <- r.fault(&clientrun.Failure{Argv: r.argv, Status: "exit status 3"})
	if err := r.exitedFirst("/x.sock", gone); err.Error() != "real server exited before it listened on /x.sock: sh -c 'exit 3': exit status 3" {
		t.Errorf("an exited server's refused buffer: %v", err)
	}
	refused := errors.New("the real server's SO_SNDBUF cannot be set: Yama")
	if err := (&realServerRole{fail: make(chan error, 1)}).exitedFirst("/x.sock", refused); err != refused {
		t.Errorf("a live server's refused buffer: %v, want the refusal", err)
	}
}

// TestRealServerExitingAtOnce: a server command that exits 0 before it
// listens ('true {socket}') says so once, in the one format of a
// process's fault: the command shell-quoted, how it ended, its stderr
// (issue 33: "exited before it listened … exited (status 0) while
// serving", the command unquoted).
func TestRealServerExitingAtOnce(t *testing.T) {
	sc := model.DefaultSide("B")
	sc.Server = "sh -c 'echo bye >&2' {socket}"
	sock := filepath.Join(testbin.ShortDir(t), "s.sock")
	_, _, err := startRealServerRole(context.Background(), wire.NewServerSpec(sc, sock))
	want := "real server exited before it listened on " + sock + ": sh -c 'echo bye >&2' " + sock + ": exit status 0\nbye"
	if err == nil || err.Error() != want {
		t.Errorf("a server that exits at once: %v\nwant: %s", err, want)
	}
}

// TestExecExitedOrRefused: a client whose buffers were refused at its
// start reports its own failure when it has exited (its status, where the
// refusal said only "process … has exited"), and the refusal, killed,
// when it still runs.
func TestExecExitedOrRefused(t *testing.T) {
	gone := errors.New("the client's SO_RCVBUF cannot be set: process 42 has exited")
	p, err := clientrun.Start([]string{"sh", "-c", "echo no export >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := exitedOrRefused(p, gone); !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no export") {
		t.Errorf("an exited client's refused buffer: %v, want its exit status and stderr", err)
	}
	p, err = clientrun.Start([]string{"sleep", "30"})
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("the client's SO_RCVBUF cannot be set: Yama")
	if err := exitedOrRefused(p, refused); err != refused {
		t.Errorf("a live client's refused buffer: %v, want the refusal", err)
	}
	if err := syscall.Kill(p.Pid(), 0); err == nil {
		t.Errorf("the live client (PID %d) was not ended", p.Pid())
	}
}
