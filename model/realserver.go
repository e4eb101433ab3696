package model

import (
	"errors"
	"strings"

	"nbdscope/shellword"
)

// A side served by a real server command (SideConfig.Server): the checks
// of its configuration.

// errServerExec refuses a live side whose client and server are both real:
// neither end's bytes can be counted on a unix socket, so it would have no
// payload and every per-2-MiB figure would be made up. An exec sweep
// (sweep --exec --server) knows each run moves the export once.
var errServerExec = errors.New("a side with a real server runs our load; a real client against a real server has no payload count live " +
	"(a unix socket has no byte counters): use sweep --exec 'CLIENT' --server 'SERVER'")

var errServerTarget = errors.New("a side runs either a real server command or loads a --target, not both")

// validateServer checks a side's real server command: words that split,
// a placeholder for where to listen, and no --target beside it.
func (s *SideConfig) validateServer() error {
	if s.Server == "" {
		return nil
	}
	if s.Target != "" {
		return &ValueError{Setting: SetServer, Value: s.Server, Reason: errServerTarget}
	}
	if s.Exec != "" {
		return &ValueError{Setting: SetServer, Value: s.Server, Reason: errServerExec}
	}
	if _, err := shellword.Split(s.Server); err != nil {
		return &ValueError{Setting: SetServer, Value: s.Server, Reason: err}
	}
	want := "{socket}"
	if s.Transport == TransportTCP {
		want = "{port}"
	}
	if !strings.Contains(s.Server, want) {
		return refused(SetServer, s.Server, "put %s where the command takes the address to listen on (transport %s)", want, s.Transport)
	}
	return nil
}
