package childproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Writer is a child's end of the messages up: one JSON object per line,
// flushed at once, safe for concurrent use (replies to polls and to
// changes are sent from different goroutines).
type Writer struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// NewWriter writes messages to w (the child's stdout).
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Send writes one message; an error (EPIPE: the controller is gone) means
// nobody is listening any more.
func (l *Writer) Send(m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("writing to the controller: %w", err)
	}
	return nil
}
