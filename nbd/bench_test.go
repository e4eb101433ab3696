package nbd

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The request/reply loop of Server and Client over a real unix socket, in
// one process, so allocs/op counts both ends. The steady state must
// allocate nothing per request (TestSteadyStateAllocs checks it).
//
//	go test -run '^$' -bench . -benchmem ./nbd/

// benchPair serves be on a unix socket and returns a connected client. The
// server's data sockets get SO_SNDBUF sndbuf when it is nonzero.
func benchPair(tb testing.TB, be Backend, readOnly bool, sndbuf int, opts ClientOptions) *Client {
	tb.Helper()
	dir, err := os.MkdirTemp("", "nbdb")
	if err != nil {
		tb.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	ln, err := ListenUnix(sock)
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatal(err)
	}
	srv := &Server{Exports: []Export{{Backend: be, ReadOnly: readOnly}}}
	if sndbuf > 0 {
		if _, err := srv.SetSocketBuffer(SendBuf, sndbuf); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	cl, err := Dial(dctx, URI{Transport: "unix", Socket: sock}, opts)
	if err != nil {
		cancel()
		<-done
		os.RemoveAll(dir)
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cl.Close()
		cancel()
		<-done
		os.RemoveAll(dir)
	})
	return cl
}

// opRing keeps len(ops) requests in flight on one client from one
// goroutine: step waits for the oldest and sends it again.
type opRing struct {
	tb      testing.TB
	cl      *Client
	ops     []*Op
	next    int
	started int
	off     uint64
	span    uint64
}

func newOpRing(tb testing.TB, cl *Client, cmd uint16, inFlight, size int) *opRing {
	r := &opRing{tb: tb, cl: cl, span: uint64(cl.Size()) - uint64(size)}
	for i := 0; i < inFlight; i++ {
		op := NewOp()
		op.Cmd = cmd
		op.Buf = make([]byte, size)
		r.ops = append(r.ops, op)
	}
	return r
}

func (r *opRing) step() {
	op := r.ops[r.next]
	r.next = (r.next + 1) % len(r.ops)
	if r.started >= len(r.ops) {
		if err := op.Wait(); err != nil {
			r.tb.Fatal(err)
		}
	} else {
		r.started++
	}
	op.Offset = r.off
	r.off += uint64(len(op.Buf))
	if r.off > r.span {
		r.off = 0
	}
	if err := r.cl.Start(op); err != nil {
		r.tb.Fatal(err)
	}
}

// drain waits for every request in flight.
func (r *opRing) drain() {
	for i := 0; i < len(r.ops) && r.started > 0; i++ {
		op := r.ops[(r.next+i)%len(r.ops)]
		if i >= len(r.ops)-r.started {
			if err := op.Wait(); err != nil {
				r.tb.Fatal(err)
			}
		}
	}
	r.started = 0
}

type benchCase struct {
	name     string
	size     int
	inFlight int
	sndbuf   int
	opts     ClientOptions
}

var readCases = []benchCase{
	{"4KiB", 4 << 10, 8, 0, ClientOptions{}},
	{"2MiB", 2 << 20, 8, 0, ClientOptions{}},
	{"2MiB-sndbuf2m", 2 << 20, 8, 2 << 20, ClientOptions{}},
	{"2MiB-simple", 2 << 20, 8, 2 << 20, ClientOptions{NoStructuredReply: true}},
	{"4KiB-64inflight", 4 << 10, 64, 0, ClientOptions{}},
	{"256KiB-64inflight", 256 << 10, 64, 0, ClientOptions{}},
}

var writeCases = []benchCase{
	{"4KiB", 4 << 10, 8, 0, ClientOptions{}},
	{"2MiB", 2 << 20, 8, 0, ClientOptions{}},
	{"2MiB-sndbuf2m", 2 << 20, 8, 0, ClientOptions{SndBuf: 2 << 20}},
}

func runRing(b *testing.B, cmd uint16, c benchCase) {
	cl := benchPair(b, NewNull(64<<30, DefaultNullFill), false, c.sndbuf, c.opts)
	r := newOpRing(b, cl, cmd, c.inFlight, c.size)
	for i := 0; i < 2*c.inFlight; i++ { // warm up: workers, pools, buffers
		r.step()
	}
	b.SetBytes(int64(c.size))
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.step()
	}
	r.drain()
	b.StopTimer()
	// Both ends run in this process: CPU per request is what the loop
	// costs, whatever the machine's other load does to ns/op.
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	st := cl.Conn().Stats()
	if payload := float64(st.RecvBytes + st.SendBytes); payload > 0 {
		calls := st.RecvCalls
		if cmd == CmdWrite {
			calls = st.SendCalls
		}
		b.ReportMetric(float64(calls)/(payload/(2<<20)), "client-calls/2MiB")
	}
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReadPipelined reads from the null backend with 8 requests in
// flight on one connection.
func BenchmarkReadPipelined(b *testing.B) {
	for _, c := range readCases {
		b.Run(c.name, func(b *testing.B) { runRing(b, CmdRead, c) })
	}
}

// BenchmarkReadCallback is BenchmarkReadPipelined with completions
// delivered to Op.Done, which sends the next read from the client's reader
// goroutine (how the load process reads): no goroutine wakes per request.
func BenchmarkReadCallback(b *testing.B) {
	for _, c := range []benchCase{readCases[0], readCases[2]} {
		b.Run(c.name, func(b *testing.B) {
			cl := benchPair(b, NewNull(64<<30, DefaultNullFill), false, c.sndbuf, c.opts)
			cb := newCallbackRing(b, cl, c.inFlight, c.size)
			cb.run(2 * c.inFlight) // warm up
			b.SetBytes(int64(c.size))
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			cb.run(b.N)
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// callbackRing keeps len(ops) reads in flight, each sent again from its
// own Done until n have been sent.
type callbackRing struct {
	tb   testing.TB
	cl   *Client
	ops  []*Op
	left atomic.Int64 // requests still to send
	off  atomic.Uint64
	span uint64
	wg   sync.WaitGroup
	err  atomic.Value
	slow chan *Op // reads TryStart could not send at once, for sender
}

func newCallbackRing(tb testing.TB, cl *Client, inFlight, size int) *callbackRing {
	r := &callbackRing{tb: tb, cl: cl, span: uint64(cl.Size()) - uint64(size), slow: make(chan *Op, inFlight)}
	go r.sender()
	tb.Cleanup(func() { close(r.slow) })
	for i := 0; i < inFlight; i++ {
		op := NewOp()
		op.Cmd = CmdRead
		op.Buf = make([]byte, size)
		op.Done = r.done
		r.ops = append(r.ops, op)
	}
	return r
}

// run sends n reads and waits for them all.
func (r *callbackRing) run(n int) {
	r.left.Store(int64(n))
	for _, op := range r.ops {
		if !r.send(op) {
			break
		}
	}
	r.wg.Wait()
	if err, ok := r.err.Load().(error); ok {
		r.tb.Fatal(err)
	}
}

// send sends op again: at once with TryStart when it can (on the reader
// goroutine, from Done), else through sender, as a load generator must.
func (r *callbackRing) send(op *Op) bool {
	if r.left.Add(-1) < 0 {
		return false
	}
	op.Offset = r.off.Add(uint64(len(op.Buf))) % r.span
	r.wg.Add(1)
	sent, err := r.cl.TryStart(op)
	if err == nil && !sent {
		r.slow <- op
		return true
	}
	if err != nil {
		r.err.Store(err)
		r.wg.Done()
		return false
	}
	return true
}

func (r *callbackRing) sender() {
	for op := range r.slow {
		if err := r.cl.Start(op); err != nil {
			r.err.Store(err)
			r.wg.Done()
		}
	}
}

func (r *callbackRing) done(op *Op) {
	if err := op.Err(); err != nil {
		r.err.Store(err)
	} else {
		r.send(op)
	}
	r.wg.Done()
}

// BenchmarkWrite writes to the null backend with 8 requests in flight.
func BenchmarkWrite(b *testing.B) {
	for _, c := range writeCases {
		b.Run(c.name, func(b *testing.B) { runRing(b, CmdWrite, c) })
	}
}

// TestSteadyStateAllocs checks that once workers, pools and buffers are
// warm, a request costs no allocation on either end (server and client run
// in this process, so the count covers both). The count is the smallest of
// a few attempts, so a stray allocation of an unrelated goroutine cannot
// fail it, while one allocation per request (8 per run) always does. It
// asserts no timing. Under -race sync.Pool drops items on purpose, so the
// test is skipped there.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items; allocation counts are meaningless")
	}
	cases := []struct {
		name     string
		cmd      uint16
		c        benchCase
		callback bool
	}{
		{"read-4KiB", CmdRead, readCases[0], false},
		{"read-2MiB", CmdRead, readCases[1], false},
		{"read-2MiB-simple", CmdRead, readCases[3], false},
		{"read-4KiB-64inflight", CmdRead, readCases[4], false},
		{"read-256KiB-64inflight", CmdRead, readCases[5], false},
		{"write-4KiB", CmdWrite, writeCases[0], false},
		{"write-2MiB", CmdWrite, writeCases[1], false},
		{"read-4KiB-callback", CmdRead, readCases[0], true},
		{"read-2MiB-callback", CmdRead, readCases[1], true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := benchPair(t, NewNull(64<<30, DefaultNullFill), false, tc.c.sndbuf, tc.c.opts)
			r := newOpRing(t, cl, tc.cmd, tc.c.inFlight, tc.c.size)
			batch := func() {
				for i := 0; i < tc.c.inFlight; i++ {
					r.step()
				}
			}
			for i := 0; i < 20; i++ {
				batch()
			}
			if tc.callback {
				r.drain()
				cb := newCallbackRing(t, cl, tc.c.inFlight, tc.c.size)
				cb.run(20 * tc.c.inFlight)
				batch = func() { cb.run(tc.c.inFlight) }
			}
			best := -1.0
			for attempt := 0; attempt < 3 && best != 0; attempt++ {
				a := testing.AllocsPerRun(50, batch)
				if best < 0 || a < best {
					best = a
				}
			}
			r.drain()
			if best != 0 {
				t.Errorf("%v allocations per %d requests in steady state, want 0", best, tc.c.inFlight)
			}
		})
	}
}
