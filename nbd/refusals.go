package nbd

import (
	"sync"
	"time"
)

// refusalLog says that connections were refused at the connection limit:
// the first at once, those that follow within a second as one line with
// their count when the second is up, so that a flood of connections
// (400 at once against 256) is seen without a line each.
type refusalLog struct {
	mu      sync.Mutex
	last    time.Time   // when a line was last written
	pending int         // refused since then, not yet said
	timer   *time.Timer // writes the pending line; nil when none is due
	limit   int
}

// refusalEvery is the most often a refusal line is written.
const refusalEvery = time.Second

// refused notes one connection refused at limit.
func (r *refusalLog) refused(s *Server, limit int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limit = limit
	if r.pending == 0 && time.Since(r.last) >= refusalEvery {
		r.last = time.Now()
		s.warnf("refusing connection: limit of %d connections reached", limit)
		return
	}
	r.pending++
	if r.timer == nil {
		r.timer = time.AfterFunc(time.Until(r.last.Add(refusalEvery)), func() { r.flush(s) })
	}
}

// flush writes the pending count, if any.
func (r *refusalLog) flush(s *Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if r.pending == 0 {
		return
	}
	s.warnf("refused %d more connections in the last %v: limit of %d connections reached", r.pending, time.Since(r.last).Round(100*time.Millisecond), r.limit)
	r.pending, r.last = 0, time.Now()
}
