package child

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/probe/schedstat"
)

// loadRole drives NBD requests against one server: N connections, each
// with Q workers that keep one request in flight apiece.
type loadRole struct {
	sched schedstat.Counter // where its time went (poll)
	ctx   context.Context
	uri   nbd.URI
	size  int64 // export size

	reqSize  atomic.Int64
	workload atomic.Int32 // index into Workloads
	readPct  atomic.Int32
	verify   bool
	consumer

	mu       sync.Mutex // serialises changes; guards inflight, buffers
	connMu   sync.Mutex // guards conns and closedIO (changes hold mu too), so poll never waits for a change
	conns    []*loadConn
	inflight int
	sndReq   int // client SO_SNDBUF request; 0 = OS default
	rcvReq   int
	reader   string // how the reader waits: nbd.ReaderPoll or ReaderNetpoller (r.mu)
	defSnd   int    // effective default of a fresh client socket
	defRcv   int
	closedIO nbd.IOStats

	gate     gate
	lost     chan error             // the first connection lost to the target (see checkLost)
	lostText atomic.Pointer[string] // its text, for the poll replies

	bytes   atomic.Uint64
	ops     atomic.Uint64
	errs    atomic.Uint64
	lastErr atomic.Value // string
	hist    model.Histogram
	maxLat  atomic.Int64 // ns: the longest request completed since the last poll
	// budMaxLat is the longest request completed since a measurement
	// began (measure): polls take maxLat meanwhile.
	budMaxLat atomic.Int64
	cursor    atomic.Uint64

	// wdata is what every WRITE sends: one pattern-filled buffer, grown to
	// the largest request size, only ever read (concurrent writev of one
	// buffer is fine). A buffer per request in flight would cost a
	// pattern fill of up to 8 GiB (256 in flight × 32 MiB) before the
	// first write; READs still land in buffers of their own.
	wmu   sync.Mutex // serialises growing wdata
	wdata atomic.Pointer[[]byte]
}

type loadConn struct {
	cl   *nbd.Client
	stop chan struct{}
	wg   sync.WaitGroup
}

func workloadIndex(w model.Workload) int32 {
	for i, v := range model.Workloads {
		if v == w {
			return int32(i)
		}
	}
	return 0
}

func startLoadRole(ctx context.Context, spec wire.LoadSpec) (role, wire.Msg, error) {
	u, err := nbd.ParseURI(spec.URI)
	if err != nil {
		return nil, wire.Msg{}, err
	}
	set := spec.Settings // the start values of the table's load settings
	r := &loadRole{ctx: ctx, uri: u, inflight: set.Int(model.SetInFlight), sndReq: set.Int(model.SetClientSndBuf),
		rcvReq: set.Int(model.SetClientRcvBuf), reader: set.Str(model.SetReader), verify: spec.Verify, lost: make(chan error, 1)}
	r.reqSize.Store(int64(set.Int(model.SetRequestSize)))
	r.workload.Store(workloadIndex(model.Workload(set.Str(model.SetWorkload))))
	r.readPct.Store(int32(set.Int(model.SetReadPercent)))
	r.initConsume(model.ConsumeMode(set.Str(model.SetConsume)), set.Int(model.SetHashThreads))
	r.gate.init(spec.Paused)
	r.defSnd, _, _ = nbd.ProbeSocketBuffer(u.Network(), nbd.SendBuf, 0)
	r.defRcv, _, _ = nbd.ProbeSocketBuffer(u.Network(), nbd.RecvBuf, 0)
	r.mu.Lock()
	err = r.setConns(set.Int(model.SetConnections))
	r.mu.Unlock()
	if err != nil {
		r.close()
		return nil, wire.Msg{}, err
	}
	return r, wire.Msg{}, nil
}

// setConns opens or closes connections until there are n. Closing waits
// for the connection's requests in flight and sends DISC. r.mu is held.
func (r *loadRole) setConns(n int) error {
	for len(r.conns) < n {
		ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		cl, err := nbd.Dial(ctx, r.uri, nbd.ClientOptions{SndBuf: r.sndReq, RcvBuf: r.rcvReq, Reader: r.reader})
		cancel()
		if err != nil {
			return err
		}
		if cl.Size() == 0 { // offsets are taken modulo the size: nothing to load
			cl.Close()
			return fmt.Errorf("the export at %s is empty (0 bytes): there is nothing to read or write", r.uri)
		}
		if r.size == 0 {
			r.size = cl.Size()
			r.startHasher()
		}
		lc := &loadConn{cl: cl}
		r.shapeLoop(cl)
		r.connMu.Lock()
		r.conns = append(r.conns, lc)
		r.connMu.Unlock()
		r.startWorkers(lc)
	}
	for len(r.conns) > n {
		// It stays listed (and counted by poll) until it is closed.
		lc := r.conns[len(r.conns)-1]
		r.stopWorkers(lc)
		lc.cl.Close()
		r.connMu.Lock()
		r.conns = r.conns[:len(r.conns)-1]
		r.closedIO = r.closedIO.Add(lc.cl.Conn().Stats())
		r.connMu.Unlock()
	}
	return nil
}

func (r *loadRole) startWorkers(lc *loadConn) {
	lc.stop = make(chan struct{})
	slots := make([]*slot, r.inflight)
	for i := range slots {
		slots[i] = r.newSlot(lc, uint64(i))
	}
	r.gate.warming(len(slots))
	lc.wg.Add(1 + len(slots))
	go r.warmSlots(lc, slots)
	for _, s := range slots {
		go r.worker(lc, s)
	}
}

// newSlot makes the slot of a connection's worker.
func (r *loadRole) newSlot(lc *loadConn, id uint64) *slot {
	return &slot{r: r, cl: lc.cl, stop: lc.stop, op: nbd.NewOp(), back: make(chan bool, 1),
		warmed: make(chan struct{}), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), id))}
}

// warmSlots warms a connection's slots one after another, on one
// goroutine: hundreds of workers each warming at once would leave the
// child's own work (dialling the next connection, answering the
// controller) one turn in hundreds of the CPU, which under the race
// detector held a load's start past 10 s. It starts at the load's first
// resume (gate.warmNow). A slot of a connection that is closing is only
// marked warm.
func (r *loadRole) warmSlots(lc *loadConn, slots []*slot) {
	defer lc.wg.Done()
	select {
	case <-r.gate.warmNow:
	case <-lc.stop:
	}
	for _, s := range slots {
		select {
		case <-s.stop:
		default:
			s.warm()
		}
		close(s.warmed)
		r.gate.warming(-1)
	}
}

// warm allocates the slot's READ buffer, when the workload reads, and
// faults its pages in, before the worker's first request: otherwise the
// recv(2) of its first reply takes those faults, and with 1 GiB in flight
// that is seconds of a VM's time charged to the data path as the client's
// CPU, with a first turn that shows no progress: a cost of this tool, not
// of what it measures. It runs apart from connecting (warmSlots), so the
// child's ready never waits for it: with huge pages off, 1 GiB takes
// seconds. Loads start paused, and a resume waits for it a while
// (warmWait), so the active clock normally starts warm.
func (s *slot) warm() {
	if w := model.Workloads[s.r.workload.Load()]; model.IsWrite(w) || (w == model.WorkMixed && s.r.readPct.Load() == 0) {
		return // never reads
	}
	s.buf, s.smallPages = s.r.readBuffer(int(s.r.reqSize.Load()))
	nbd.Prefault(s.buf)
}

func (r *loadRole) stopWorkers(lc *loadConn) {
	close(lc.stop)
	lc.wg.Wait()
}

// slot is one request a worker keeps in flight.
type slot struct {
	r    *loadRole
	cl   *nbd.Client
	stop chan struct{}
	rng  *rand.Rand
	// warmed is closed once warmSlots has given the slot its buffer.
	warmed chan struct{}
	op     *nbd.Op
	buf    []byte // READ destination
	// smallPages: buf is on 4 KiB pages, as qemu-img's are (readBuffer).
	smallPages bool
	read       bool      // op is a READ
	t0         time.Time // when op was sent
	// ready: the completion callback prepared op (a write) and holds the
	// gate for it; the worker sends it without preparing another.
	ready bool
	back  chan bool // callback → worker: the chain ended (true: connection dead)
	sink  []byte
	pos   uint64 // stream position of a sequential request (seq)
	seq   bool
}

// worker keeps one request in flight. A READ is sent again from the
// completion callback of the previous one, on the client's reader
// goroutine, so a read costs no goroutine wake-up (the way qemu-img's
// coroutines work); whatever that path does not do comes back here: a
// pause or stop, a WRITE (its payload must not hold up the reader), a
// larger buffer, verification, a broken connection.
func (r *loadRole) worker(lc *loadConn, s *slot) {
	defer lc.wg.Done()
	defer r.checkLost(lc.cl)
	<-s.warmed // warmSlots always closes it
	done := s.done
	for {
		if !s.ready {
			if !r.gate.enter(s.stop) {
				return
			}
			s.prepare(true)
		}
		s.ready = false
		if s.read && !r.verify {
			s.op.Done = done
			s.t0 = time.Now()
			if err := s.cl.Start(s.op); err != nil {
				s.op.Done = nil
				r.consume(s, err) // a hole in a hashed pass, not a wait for it
				r.account(s, err, 0)
				r.gate.leave()
				if s.cl.Err() != nil {
					return // the connection is gone; the controller reports why
				}
				continue
			}
			if dead := <-s.back; dead {
				return
			}
			continue
		}
		s.op.Done = nil
		t0 := time.Now()
		err := s.cl.Do(s.op)
		r.consume(s, err)
		r.account(s, err, time.Since(t0))
		r.gate.leave()
		if err != nil && s.cl.Err() != nil {
			return
		}
	}
}

// prepare sets op up for the next request. Without alloc it reports false,
// leaving everything as it was, when a buffer would have to grow.
func (s *slot) prepare(alloc bool) bool {
	r := s.r
	size := int(r.reqSize.Load())
	w := model.Workloads[r.workload.Load()]
	read := true
	switch w {
	case model.WorkWrite, model.WorkRandWrite:
		read = false
	case model.WorkMixed:
		read = s.rng.IntN(100) < int(r.readPct.Load())
	}
	var buf []byte
	if read {
		if cap(s.buf) < size || s.smallPages != r.readsLikeQemuImg() {
			if !alloc {
				return false
			}
			s.buf, s.smallPages = r.readBuffer(size)
		}
		buf = s.buf[:size]
	} else {
		wd := r.wdata.Load()
		if wd == nil || len(*wd) < size {
			if !alloc {
				return false
			}
			wd = r.writeData(size)
		}
		buf = (*wd)[:size]
	}
	var off int64
	s.seq = false
	if w == model.WorkRandRead || w == model.WorkRandWrite || w == model.WorkMixed {
		slots := r.size / int64(size)
		if slots > 0 {
			off = s.rng.Int64N(slots) * int64(size)
		}
	} else {
		s.pos, size = r.nextSeq(size)
		off, s.seq = int64(s.pos%uint64(r.size)), true
	}
	s.op.Buf = buf[:size]
	s.op.Offset = uint64(off)
	s.op.Cmd = nbd.CmdWrite
	if read {
		s.op.Cmd = nbd.CmdRead
	}
	s.read = read
	return true
}

// readsLikeQemuImg reports whether the load reads into buffers backed as
// qemu-img convert's are: in the scan consume mode, convert's.
func (r *loadRole) readsLikeQemuImg() bool { return r.consumeMode() == model.ConsumeScan }

// readBuffer makes a slot's READ buffer of n bytes, and reports whether it
// is on small pages. In the scan mode it is backed as qemu-img convert's
// buffers are, on 4 KiB pages (nbd.MakeSmallPagePayload says why that
// decides how often the reader trails our server); in the others, which
// stand for libnbd's clients or none, with huge pages where the kernel
// gives them (nbd.MakePayload). A change of mode gives each slot a buffer
// of the new kind at its next request.
func (r *loadRole) readBuffer(n int) ([]byte, bool) {
	if r.readsLikeQemuImg() {
		return nbd.MakeSmallPagePayload(n), true
	}
	return nbd.MakePayload(n), false
}

// writeData returns the WRITE payload buffer, grown to at least size.
func (r *loadRole) writeData(size int) *[]byte {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if wd := r.wdata.Load(); wd != nil && len(*wd) >= size {
		return wd
	}
	b := nbd.MakePayload(size)
	nbd.PatternFill(0, b) // recognisable data
	r.wdata.Store(&b)
	return &b
}

// done is the completion callback of an inline READ (see worker). It runs
// on the client's reader goroutine and must not block: it never waits for
// a lock a sender holds, nor for the socket (TryStart).
func (s *slot) done(op *nbd.Op) {
	r := s.r
	err := op.Err()
	r.consume(s, err)
	r.account(s, err, time.Since(s.t0))
	r.gate.leave()
	if err != nil && s.cl.Err() != nil {
		s.back <- true
		return
	}
	select {
	case <-s.stop:
		s.back <- false
		return
	default:
	}
	if !r.gate.tryEnter() {
		s.back <- false
		return
	}
	if !s.prepare(false) {
		r.gate.leaveUnsent()
		s.back <- false
		return
	}
	if !s.read {
		s.ready = true
		s.back <- false
		return
	}
	s.t0 = time.Now()
	sent, err := s.cl.TryStart(op)
	if err != nil {
		r.consume(s, err) // a hole in a hashed pass, not a wait for it
		r.account(s, err, 0)
		r.gate.leave()
		s.back <- s.cl.Err() != nil
		return
	}
	if !sent {
		// Another request is being sent or the socket is full: the
		// worker sends this one, since waiting here could wait for a
		// server that waits for this goroutine to read its replies.
		s.ready = true
		s.back <- false
	}
}

// account records a finished request.
func (r *loadRole) account(s *slot, err error, lat time.Duration) {
	if err != nil {
		r.errs.Add(1)
		r.lastErr.Store(err.Error())
		return
	}
	r.bytes.Add(uint64(len(s.op.Buf)))
	r.ops.Add(1)
	r.hist.Add(lat)
	raiseTo(&r.maxLat, int64(lat))
	raiseTo(&r.budMaxLat, int64(lat))
	if s.read && r.verify {
		if bad, ok := nbd.PatternCheck(int64(s.op.Offset), s.op.Buf); !ok {
			r.errs.Add(1)
			r.lastErr.Store(fmt.Sprintf("verify: data at offset %d does not match the pattern", bad))
		}
	}
}

// raiseTo makes a at least v.
func raiseTo(a *atomic.Int64, v int64) {
	for m := a.Load(); v > m; m = a.Load() {
		if a.CompareAndSwap(m, v) {
			return
		}
	}
}

func (r *loadRole) handle(c wire.Cmd) wire.Msg {
	switch c.Op {
	case "poll":
		return r.poll()
	case "set":
		return r.set(c)
	case "get":
		return r.settings()
	case wire.OpMeasure:
		return r.measure(c)
	case "reconnect":
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := r.reconnect(); err != nil {
			return wire.Msg{Type: "error", Err: err.Error()}
		}
		return wire.Msg{Reconnected: true, Effective: len(r.conns)}
	}
	return wire.Msg{Type: "error", Err: fmt.Sprintf("load: unknown op %q", c.Op)}
}

// settings reports what the load runs with, so the controller's view can
// be checked against it.
func (r *loadRole) settings() wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return wire.Msg{Settings: map[string]string{
		model.SetConnections:  strconv.Itoa(len(r.conns)),
		model.SetInFlight:     strconv.Itoa(r.inflight),
		model.SetRequestSize:  strconv.FormatInt(r.reqSize.Load(), 10),
		model.SetWorkload:     string(model.Workloads[r.workload.Load()]),
		model.SetReadPercent:  strconv.Itoa(int(r.readPct.Load())),
		model.SetConsume:      string(r.consumeMode()),
		model.SetHashThreads:  strconv.Itoa(r.threads.limit()),
		model.SetClientSndBuf: strconv.Itoa(r.sndReq),
		model.SetClientRcvBuf: strconv.Itoa(r.rcvReq),
		model.SetReader:       r.reader,
	}}
}

func (r *loadRole) poll() wire.Msg {
	r.connMu.Lock()
	io := r.closedIO
	for _, lc := range r.conns {
		io = io.Add(lc.cl.Conn().Stats())
	}
	m := wire.Msg{Conns: len(r.conns)}
	for _, lc := range r.conns {
		r.checkLost(lc.cl) // also while paused, when no worker would see it
	}
	if len(r.conns) > 0 {
		m.SndBuf, _ = r.conns[0].cl.Conn().Buffer(nbd.SendBuf)
		m.RcvBuf, _ = r.conns[0].cl.Conn().Buffer(nbd.RecvBuf)
		m.SndBufLocked = r.conns[0].cl.Conn().BufferLocked(nbd.SendBuf)
	}
	r.connMu.Unlock()
	m.Counters = wire.SelfCounters(io)
	wire.ReadSched(&r.sched, &m.Counters, os.Getpid())
	m.Bytes = r.bytes.Load()
	m.Ops = r.ops.Load()
	m.Errors = r.errs.Load()
	if v, ok := r.lastErr.Load().(string); ok {
		m.LastErr = v
	}
	active, cpu := r.gate.clock()
	m.ActiveNs, m.ClockCPU = active, &cpu
	m.Warming = r.gate.warmingUp()
	m.Hist = r.hist.Snapshot()
	m.MaxLatNs = r.maxLat.Swap(0)
	m.Consumed = r.consumeStats()
	if l := r.lostText.Load(); l != nil {
		m.Lost = *l
	}
	return m
}

// set applies a setting through its entry in the settings table.
func (r *loadRole) set(c wire.Cmd) wire.Msg {
	set, bad := childSetter(c, "load", loadSetters)
	if bad != nil {
		return *bad
	}
	return set(r, c)
}

// loadSetters apply the load's settings (those of the table that apply
// AtLoad, and the pause), by setting name.
var loadSetters = map[string]func(*loadRole, wire.Cmd) wire.Msg{
	model.SetClientSndBuf: (*loadRole).setSndBuf,
	model.SetClientRcvBuf: (*loadRole).setRcvBuf,
	model.SetConnections:  (*loadRole).setConnections,
	model.SetRequestSize:  (*loadRole).setRequestSize,
	model.SetInFlight:     (*loadRole).setInFlight,
	model.SetWorkload:     (*loadRole).setWorkload,
	model.SetReadPercent:  (*loadRole).setReadPercent,
	model.SetConsume:      (*loadRole).setConsumeMode,
	model.SetHashThreads:  (*loadRole).setHashThreads,
	model.SetReader:       (*loadRole).setReader,
	model.SetPaused:       (*loadRole).setPaused,
}

func childFail(err error) wire.Msg { return wire.Msg{Type: "error", Err: err.Error()} }

func (r *loadRole) setPaused(c wire.Cmd) wire.Msg {
	if c.Int == 0 {
		followPlacement()
	}
	r.gate.setPaused(c.Int != 0)
	return wire.Msg{}
}

func (r *loadRole) setRequestSize(c wire.Cmd) wire.Msg {
	r.reqSize.Store(int64(c.Int))
	return wire.Msg{}
}

func (r *loadRole) setWorkload(c wire.Cmd) wire.Msg {
	r.workload.Store(workloadIndex(model.Workload(c.Str)))
	return wire.Msg{}
}

func (r *loadRole) setReadPercent(c wire.Cmd) wire.Msg {
	r.readPct.Store(int32(c.Int))
	return wire.Msg{}
}

func (r *loadRole) setConnections(c wire.Cmd) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.setConns(c.Int); err != nil {
		return childFail(err)
	}
	return wire.Msg{Effective: len(r.conns)}
}

func (r *loadRole) setInFlight(c wire.Cmd) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight = c.Int
	for _, lc := range r.conns {
		r.stopWorkers(lc)
		r.startWorkers(lc)
	}
	return wire.Msg{}
}

// setReader applies a live change of how the reader waits: every
// connection is opened again with the new reader (the requests in flight
// finish first), since a socket taken out of Go's netpoller does not go
// back.
func (r *loadRole) setReader(c wire.Cmd) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reader = c.Str
	if err := r.reconnect(); err != nil {
		return childFail(err)
	}
	return wire.Msg{}
}

func (r *loadRole) setSndBuf(c wire.Cmd) wire.Msg { return r.setBuffer(nbd.SendBuf, c.Int) }
func (r *loadRole) setRcvBuf(c wire.Cmd) wire.Msg { return r.setBuffer(nbd.RecvBuf, c.Int) }

// setBuffer sets the client's SO_SNDBUF or SO_RCVBUF (0: the OS default)
// on every connection. On TCP the OS default cannot be set back on an
// open socket whose buffer was set (Linux locked it and stopped
// autotuning), so the connections are re-opened instead.
func (r *loadRole) setBuffer(which nbd.SockBuf, req int) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	def := r.defSnd
	if which == nbd.SendBuf {
		r.sndReq = req
	} else {
		def, r.rcvReq = r.defRcv, req
	}
	if req == 0 && r.uri.Network() == "tcp" {
		if !r.anyLocked(which) {
			return wire.Msg{}
		}
		if err := r.reconnect(); err != nil {
			return wire.Msg{Type: "error", Err: err.Error()}
		}
		return wire.Msg{Reconnected: true}
	}
	if req == 0 {
		req = nbd.RequestForEffective(def)
	}
	m := wire.Msg{}
	for _, lc := range r.conns {
		eff, err := lc.cl.Conn().SetBuffer(which, req)
		if err != nil {
			return wire.Msg{Type: "error", Err: err.Error()}
		}
		m.Effective = eff
	}
	return m
}

// anyLocked reports whether an open connection's buffer was set. r.mu is
// held.
func (r *loadRole) anyLocked(which nbd.SockBuf) bool {
	for _, lc := range r.conns {
		if lc.cl.Conn().BufferLocked(which) {
			return true
		}
	}
	return false
}

// reconnect re-opens every connection with the buffers requested now, so
// the new sockets start from the OS defaults where nothing is requested.
// Requests in flight finish first (closing waits for them); the counters
// of the closed connections are kept. r.mu is held.
func (r *loadRole) reconnect() error {
	n := len(r.conns)
	if err := r.setConns(0); err != nil {
		return err
	}
	return r.setConns(n)
}

func (r *loadRole) close() {
	r.gate.setPaused(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setConns(0)
}

// gate pauses workers and keeps the active time: from resume until a pause
// has drained every request in flight.
type gate struct {
	mu       sync.Mutex
	paused   bool
	resume   chan struct{} // closed while running
	busy     int
	warm     int           // slots still warming their buffers
	warmNow  chan struct{} // closed by the first resume: warming may start
	drained  *sync.Cond    // busy fell to 0, warm fell to 0, or a wait's limit
	counting bool          // running, or a pause still draining: active time runs
	since    time.Time
	active   time.Duration
	// cpuSince and cpu are the process's CPU at the clock's last start
	// and what it spent while the clock ran before that: the CPU of the
	// same moments as active (clockCPU).
	cpuSince wire.CPU
	cpu      wire.CPU
	bud      budget // a measurement of a fixed number of requests (budget.go)
}

// drainWait bounds how long a pause waits for the requests in flight to
// drain before it answers. Deep queues on a slow target can take many
// seconds (1 GiB in flight); a stuck target, for ever. The change after
// the pause must not wait behind it, so the pause answers and the drain
// goes on (its time still counts as active: see account).
const drainWait = 2 * time.Second

func (g *gate) init(paused bool) {
	g.drained = sync.NewCond(&g.mu)
	g.paused = paused
	g.resume = make(chan struct{})
	g.warmNow = make(chan struct{})
	if !paused {
		close(g.resume)
		close(g.warmNow)
	}
	g.account()
}

// account starts or stops the active time as the state changed. g.mu is
// held.
func (g *gate) account() {
	c := !g.paused || g.busy > 0
	switch {
	case c && !g.counting:
		g.since, g.cpuSince = time.Now(), wire.SelfCPU()
	case !c && g.counting:
		g.active += time.Since(g.since)
		g.cpu = g.cpu.Add(wire.SelfCPU().Sub(g.cpuSince))
	}
	g.counting = c
}

var errStopped = errors.New("stopped")

// enter waits until the gate is open; false when stop closed first.
func (g *gate) enter(stop chan struct{}) bool {
	for {
		select {
		case <-stop:
			return false
		default:
		}
		g.mu.Lock()
		if !g.paused {
			g.admit()
			g.mu.Unlock()
			return true
		}
		ch := g.resume
		g.mu.Unlock()
		select {
		case <-ch:
		case <-stop:
			return false
		}
	}
}

// tryEnter enters if the gate is open, without waiting.
func (g *gate) tryEnter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return false
	}
	g.admit()
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	g.busy--
	if g.busy == 0 {
		g.drained.Broadcast()
		g.account()
		g.budgetDrained()
	}
	g.mu.Unlock()
}

// setPaused opens or closes the gate. A pause waits for the requests in
// flight to drain, at most drainWait.
func (g *gate) setPaused(p bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p == g.paused {
		return
	}
	if !p {
		g.open()
		return
	}
	g.paused = true
	g.resume = make(chan struct{})
	g.waitUntil(drainWait, func() bool { return g.busy == 0 || !g.paused })
	g.account()
}

// open opens a paused gate. The active clock starts with the slots'
// buffers ready. A load warms them on its first resume, not at its start:
// a side waiting its turn must not take the CPU from the side whose turn
// it is. g.mu is held.
func (g *gate) open() {
	select {
	case <-g.warmNow:
	default:
		close(g.warmNow)
	}
	g.waitUntil(warmWait, func() bool { return g.warm == 0 })
	g.paused = false
	close(g.resume)
	g.account()
}

// warmWait bounds how long a resume waits for slots still warming their
// buffers (slot.warm). 1 GiB takes a fraction of a second with huge pages
// on most machines; on a VM whose host backs fresh memory lazily, zeroing
// it ran at 0.4 GiB/s, so a 2 s bound left the first second of a side's
// first turn without progress. Without huge pages, or under the race
// detector, it takes longer still, and the load must not wait for all of
// it. It is waited once per load, on its first resume.
const warmWait = 5 * time.Second

// warmingUp reports that a resume is waiting for slots to warm, or that
// they warm while the load runs: the side's first turn has come, and its
// buffers are not all ready yet.
func (g *gate) warmingUp() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.warmNow:
		return g.warm > 0
	default:
		return false
	}
}

// warming counts slots that start (+1) or finish (-1) warming.
func (g *gate) warming(delta int) {
	g.mu.Lock()
	g.warm += delta
	if g.warm == 0 {
		g.drained.Broadcast()
	}
	g.mu.Unlock()
}

// waitUntil waits on g.drained until done holds, at most limit. g.mu is
// held.
func (g *gate) waitUntil(limit time.Duration, done func() bool) {
	deadline := time.Now().Add(limit)
	t := time.AfterFunc(limit, func() {
		g.mu.Lock()
		g.drained.Broadcast()
		g.mu.Unlock()
	})
	defer t.Stop()
	for !done() && time.Now().Before(deadline) {
		g.drained.Wait()
	}
}

// clock is the active time and the CPU the process spent while it ran,
// up to now, read together: its CPU per second of load never counts
// what it did paused (a first resume warms the buffers before the clock
// starts: 0.06 s of CPU in a 0.09 s first sample read 1.67 cores busy on
// one core).
func (g *gate) clock() (activeNs int64, cpu wire.CPU) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, c := g.active, g.cpu
	if g.counting {
		a += time.Since(g.since)
		c = c.Add(wire.SelfCPU().Sub(g.cpuSince))
	}
	return int64(a), c
}

func (g *gate) activeNs() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.active
	if g.counting {
		a += time.Since(g.since)
	}
	return int64(a)
}
