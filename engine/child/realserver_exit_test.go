package child

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestExitedFirstPrefersTheExit: a buffer refused at the start because
// the server had already exited reports the exit ("exited before it
// listened …: exit status 3"), not the refusal ("process … has exited"),
// which under CI's load was what a command that fails at once gave; a
// refusal of a live server is reported as it is.
func TestExitedFirstPrefersTheExit(t *testing.T) {
	gone := errors.New("the real server's SO_SNDBUF cannot be set: process 42 has exited")
	r := &realServerRole{fail: make(chan error, 1)}
	r.fail <- fmt.Errorf("real server: %w", errors.New("sh -c 'exit 3': exit status 3"))
	if err := r.exitedFirst("/x.sock", gone); !strings.Contains(err.Error(), "exited before it listened on /x.sock: sh -c 'exit 3': exit status 3") {
		t.Errorf("an exited server's refused buffer: %v", err)
	}
	refused := errors.New("the real server's SO_SNDBUF cannot be set: Yama")
	if err := (&realServerRole{fail: make(chan error, 1)}).exitedFirst("/x.sock", refused); err != refused {
		t.Errorf("a live server's refused buffer: %v, want the refusal", err)
	}
}
