package nbd

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines is a Warnf that keeps what it was given.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (w *lines) warnf(format string, a ...any) {
	w.mu.Lock()
	w.l = append(w.l, fmt.Sprintf(format, a...))
	w.mu.Unlock()
}

func (w *lines) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.l...)
}

// TestRefusalsLoggedAndCounted: connections beyond MaxConns are each
// counted in Stats().Refused and said on Warnf, the first at once and the
// rest of the second as one line with their count (issue 33: beyond the
// 256 limit they were dropped without a line, and --stats did not count
// them). Logf is not set: the refusals need no verbose logging.
func TestRefusalsLoggedAndCounted(t *testing.T) {
	var w lines
	ts := startCustomServer(t, &Server{Exports: []Export{{Backend: NewMemory(1 << 20)}}, MaxConns: 1, Warnf: w.warnf})
	c := dial(t, ts, ClientOptions{})
	for range 5 {
		r := rawDialBare(t, ts)
		r.expectClosed()
		r.Close()
	}
	if got := ts.srv.Stats().Refused; got != 5 {
		t.Errorf("Stats().Refused = %d, want 5", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(w.all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := w.all()
	want := []string{"refusing connection: limit of 1 connections reached", "refused 4 more connections in the last "}
	if len(got) != 2 || got[0] != want[0] || !strings.HasPrefix(got[1], want[1]) {
		t.Errorf("lines:\n%s\nwant:\n%s…", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := c.ReadAt(make([]byte, 512), 0); err != nil {
		t.Fatalf("the client within the limit: %v", err)
	}
}
