package testbin

import (
	"strings"
	"sync"
)

// SyncBuffer collects a child process's output while it runs: a Writer
// for its stdout or stderr that a test may read (String) at any time.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
