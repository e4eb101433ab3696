package model

import (
	"errors"
	"fmt"
	"strings"

	"nbdscope/clientrun"
)

// A side served by a real server command (SideConfig.Server): the checks
// of its configuration.

var errServerTarget = errors.New("server: a side runs either a real server command or loads a --target, not both")

// validateServer checks a side's real server command: words that split,
// a placeholder for where to listen, and no --target beside it.
func (s *SideConfig) validateServer() error {
	if s.Server == "" {
		return nil
	}
	if s.Target != "" {
		return errServerTarget
	}
	if _, err := clientrun.Split(s.Server); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	want := "{socket}"
	if s.Transport == "tcp" {
		want = "{port}"
	}
	if !strings.Contains(s.Server, want) {
		return fmt.Errorf("server %q: put %s where the command takes the address to listen on (transport %s)", s.Server, want, s.Transport)
	}
	return nil
}
