// Package servestats is `nbdscope serve --stats`: live figures of a
// server in this process, like nbdkit's stats filter but while it runs.
// Every interval it writes a line per connection and one in total
// (logfmt: key=value, so scripts can read them); at the end, or when
// asked (SIGUSR1), a summary table and, if wanted, the same as JSON.
// Every figure is model's (ProcessFigures): the per-2-MiB counts over
// the payload the server moved (READ data sent, WRITE data received).
package servestats

import (
	"fmt"
	"io"
	"sync"
	"time"

	"nbdscope/model"
	"nbdscope/nbd"
)

// Source is what the reporter reads: an nbd.Server and this process's
// own counters (getrusage), replaceable in tests.
type Source interface {
	Stats() nbd.ServerStats
	Conns() []nbd.ConnInfo
}

// maxRemembered bounds the connections kept for the summary; beyond it
// the oldest closed ones are only in the total.
const maxRemembered = 1024

// Reporter keeps the state between two reports.
type Reporter struct {
	src   Source
	self  func() model.Counters // this process's CPU and context switches
	out   io.Writer
	now   func() time.Time
	start time.Time

	mu     sync.Mutex
	closed []closedConn // ended since the last tick (OnConnClose)

	last      time.Time
	prev      map[uint64]nbd.ConnInfo // each open connection at the last tick
	prevTotal nbd.ServerStats
	prevSelf  model.Counters
	// at the start, for the summary
	firstTotal nbd.ServerStats
	firstSelf  model.Counters
	conns      map[uint64]*connSummary // every connection seen, for the summary
	order      []uint64
}

// closedConn is a connection's last figures and when it ended.
type closedConn struct {
	info nbd.ConnInfo
	at   time.Time
}

// connSummary is one connection over its life.
type connSummary struct {
	info nbd.ConnInfo
	end  time.Time // when it closed; zero while open
}

// New starts a reporter: the figures count from now.
func New(src Source, self func() model.Counters, out io.Writer, now func() time.Time) *Reporter {
	t := now()
	st, c := src.Stats(), self()
	return &Reporter{src: src, self: self, out: out, now: now, start: t, last: t, prev: map[uint64]nbd.ConnInfo{},
		prevTotal: st, prevSelf: c, firstTotal: st, firstSelf: c, conns: map[uint64]*connSummary{}}
}

// ConnClosed is the server's OnConnClose hook: the connection's last
// figures go into the next report.
func (r *Reporter) ConnClosed(ci nbd.ConnInfo) {
	r.mu.Lock()
	r.closed = append(r.closed, closedConn{ci, r.now()})
	r.mu.Unlock()
}

// Tick writes one report: a line per connection open now or closed
// since the last report, then the total line.
func (r *Reporter) Tick() {
	now := r.now()
	wall := now.Sub(r.last).Seconds()
	t := now.Sub(r.start).Seconds()
	r.mu.Lock()
	closed := r.closed
	r.closed = nil
	r.mu.Unlock()
	for _, ci := range r.src.Conns() {
		r.connLine(t, wall, ci, time.Time{})
	}
	for _, c := range closed {
		r.connLine(t, wall, c.info, c.at)
	}
	st, self := r.src.Stats(), r.self()
	d := self.Sub(r.prevSelf)
	d.IO = st.IO.Sub(r.prevTotal.IO)
	pl := st.Payload.Sub(r.prevTotal.Payload).Total()
	p := model.ProcessFigures(d, pl, wall)
	fmt.Fprintf(r.out, "stats t=%.1f total conns=%d %s wakeups_per_2mib=%s+%s faults_per_2mib=%s cpu_s=%.3f cores=%s total_bytes=%d refused=%d\n",
		t, st.Open, ioFields(pl, wall, p), p.VolCSPer2MiB.Fixed(2), p.InvolCSPer2MiB.Fixed(2), p.FaultsPer2MiB.Fixed(2),
		d.UserS+d.SysS, p.CoresBusy.Fixed(2), st.Payload.Total(), st.Refused-r.firstTotal.Refused)
	r.prevTotal, r.prevSelf, r.last = st, self, now
}

// connLine writes a connection's line for the interval and remembers it.
// end is when it closed; zero while it is open.
func (r *Reporter) connLine(t, wall float64, ci nbd.ConnInfo, end time.Time) {
	closed := !end.IsZero()
	prev := r.prev[ci.ID] // zero for a connection new in this interval
	pl := ci.Payload.Sub(prev.Payload).Total()
	p := model.ProcessFigures(model.Counters{IO: ci.IO.Sub(prev.IO)}, pl, wall)
	state := "open"
	if closed {
		state = "closed"
		delete(r.prev, ci.ID)
	} else {
		r.prev[ci.ID] = ci
	}
	fmt.Fprintf(r.out, "stats t=%.1f conn=%d state=%s %s total_bytes=%d\n", t, ci.ID, state, ioFields(pl, wall, p), ci.Payload.Total())
	r.remember(ci, end)
}

// ioFields are the figures a connection line and the total line share.
func ioFields(payload uint64, wall float64, p model.Process) string {
	return fmt.Sprintf("bytes=%d gibps=%s send_per_2mib=%s recv_per_2mib=%s send_eagain_per_2mib=%s recv_eagain_per_2mib=%s",
		payload, gib(model.Throughput(payload, wall)), p.SendCallsPer2MiB.Fixed(2), p.RecvCallsPer2MiB.Fixed(2),
		p.SendEAGAINPer2MiB.Fixed(2), p.RecvEAGAINPer2MiB.Fixed(2))
}

func gib(f model.Figure) string {
	if !f.Known() {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", float64(f)/model.GiB)
}

func (r *Reporter) remember(ci nbd.ConnInfo, end time.Time) {
	c := r.conns[ci.ID]
	if c == nil {
		c = &connSummary{}
		r.conns[ci.ID] = c
		r.order = append(r.order, ci.ID)
		if len(r.order) > maxRemembered {
			delete(r.conns, r.order[0])
			r.order = r.order[1:]
		}
	}
	c.info, c.end = ci, end
}
