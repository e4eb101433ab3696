package model

import (
	"errors"
	"strings"

	"nbdscope/shellword"
)

// A side served by a real server command (SideConfig.Server): the checks
// of its configuration.

// A side whose client and server are both real (exec and server) is not
// refused: neither end's bytes can be counted on a unix socket, so, as an
// exec sweep does, each client run that finishes is taken to move the
// export once (PayloadAssumedWarning says so).

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
