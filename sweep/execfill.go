package sweep

import (
	"context"
	"sync"
	"time"

	"nbdscope/engine"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/probe/sockdiag"
	"nbdscope/probe/syscount"
)

// The send-buffer fill of an exec sweep's runs: the server is our child
// (the bulk sender for reads), the client the exec'd command's process
// tree (the sender for writes). While a client runs, the data connections
// between the two are looked up again and again (a client connects after
// it starts, nbdcopy opens several), both ways, and measured from
// outside as a live side's are (engine/fill.go): in the kernel
// (syscount.FillMeter) where its programs load and the connections are
// unix sockets, else by one sampler for the sweep, started for the first
// run the kernel cannot measure. After the run the direction the
// payload went picks the sender's fill, and the run names what measured
// it (model.ExecRun.FillSource).

// execFillLookup is how often a run's connections are looked up until
// one is found: a client connects within milliseconds of its start.
// execFillRefresh is how often after that: a client may open more
// (nbdcopy), but looking every 20 ms for the whole run cost the sweep
// process a tenth of a core on a 2-core machine (each look lists both
// processes' sockets and describes them, twice), taken from the client
// and server it measures.
const (
	execFillLookup  = 20 * time.Millisecond
	execFillRefresh = 250 * time.Millisecond
)

// Groups of the meter and the sampler: the server sending (reads), the
// client sending (writes).
const (
	execFillServer = "server"
	execFillClient = "client"
)

// execFill is the sweep's fill meters; err says why there is neither.
type execFill struct {
	ctx  context.Context
	conn *sockdiag.Conn
	// kern measures in the kernel; nil where its programs cannot load
	// (doctor says why).
	kern *syscount.FillMeter
	mu   sync.Mutex // smp and err, started by a run's lookups
	smp  *sockdiag.Sampler
	err  error
	// asked is the source the sweep asked for (Config.FillSource).
	asked string
}

// openExecKernelFill loads the kernel's fill programs; tests replace it
// to run the sampler.
var openExecKernelFill = engine.OpenKernelFill

// startExecFill starts measuring for a sweep: in the kernel where its
// programs load and source asks for it (the default, --fill-source;
// the sampler starts then only for a run they cannot measure), else
// with the sampler. A failure (no sock_diag here) leaves
// every run's fill n/a with the reason.
func startExecFill(ctx context.Context, source string) *execFill {
	conn, err := sockdiag.Dial()
	if err != nil {
		return &execFill{err: err}
	}
	f := &execFill{ctx: ctx, conn: conn, asked: source}
	if model.FillInKernel(source) {
		if k, err := openExecKernelFill(source); err == nil {
			f.kern = k
			return f
		}
	}
	if f.sampler() == nil {
		conn.Close()
		f.conn = nil
	}
	return f
}

// sampler starts the sampler, once, and gives it (nil when it cannot
// start: err says why).
func (f *execFill) sampler() *sockdiag.Sampler {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.smp == nil && f.err == nil && f.ctx != nil {
		f.smp, f.err = sockdiag.StartSampler(f.ctx, sockdiag.SamplerConfig{Rate: sockdiag.DefaultRate})
	}
	return f.smp
}

// measuring says whether fill can be measured at all.
func (f *execFill) measuring() bool {
	if f.kern != nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.smp != nil
}

// stop ends the measuring.
func (f *execFill) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.smp != nil {
		f.smp.Stop()
	}
	if f.kern != nil {
		f.kern.Close()
	}
	if f.conn != nil {
		f.conn.Close()
	}
}

// execFillRun follows one client run.
type execFillRun struct {
	f         *execFill
	serverPID int
	stopOnce  sync.Once
	end       chan struct{}
	done      chan struct{}
	mu        sync.Mutex
	why       *model.Reason // the last lookup's failure
	found     bool          // a data connection was found
	began     bool          // started was called: the client ran
	lookups   int           // made so far (tests)
	// sources: what measures each group (model.FillSource…), set at
	// the group's first find.
	sources map[string]string
}

// watch begins following a run against the server with serverPID; its
// started is the client's start hook (clientrun.RunNotify).
func (f *execFill) watch(serverPID int) *execFillRun {
	r := &execFillRun{f: f, serverPID: serverPID, end: make(chan struct{}), done: make(chan struct{}), sources: map[string]string{}}
	for _, g := range []string{execFillServer, execFillClient} {
		if f.kern != nil {
			f.kern.Take(g) // what earlier runs left
		}
		if f.smp != nil {
			f.smp.Take(g)
		}
	}
	return r
}

// started follows the client with pid until finish.
func (r *execFillRun) started(pid int) {
	r.began = true // before RunNotify waits, in its caller's goroutine
	if !r.f.measuring() {
		close(r.done)
		return
	}
	go func() {
		defer close(r.done)
		t := time.NewTicker(execFillLookup)
		defer t.Stop()
		refreshing := false
		for {
			if r.lookup(pid) && !refreshing {
				t.Reset(execFillRefresh)
				refreshing = true
			}
			select {
			case <-r.end:
				return
			case <-t.C:
			}
		}
	}()
}

// lookup points the meters at the run's data connections, both ways,
// and tells whether one has been found.
func (r *execFillRun) lookup(pid int) bool {
	srv, cli := engine.FillProc{PID: r.serverPID}, engine.FillProc{PID: pid, Tree: true}
	toClient, toClientUnix, err := engine.DataSendersUnix(r.f.conn, srv, cli)
	toServer, toServerUnix, _ := engine.DataSendersUnix(r.f.conn, cli, srv)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if err != nil && !r.found {
		r.why, _ = engine.FillReason(err)
	}
	if len(toClient) > 0 {
		r.found = true
		r.point(execFillServer, toClient, toClientUnix)
	}
	if len(toServer) > 0 {
		r.point(execFillClient, toServer, toServerUnix)
	}
	return r.found
}

// point points the group at its senders: in the kernel where it
// measures them all (unix sockets), else in the sampler; a group stays
// with what measured it first, so that its window is one meter's. r.mu
// is held.
func (r *execFillRun) point(group string, senders []sockdiag.FD, allUnix bool) {
	src := r.sources[group]
	if src == "" {
		src = model.FillSourceSampler
		if r.f.kern != nil && allUnix {
			src = r.f.asked
		}
		r.sources[group] = src
	}
	if model.FillInKernel(src) {
		inodes := make([]uint64, 0, len(senders))
		for _, h := range senders {
			inodes = append(inodes, uint64(h.Inode))
		}
		r.f.kern.Set(group, inodes)
		return
	}
	if smp := r.f.sampler(); smp != nil {
		smp.SetHeld(group, senders)
	}
}

// finish ends following the run and gives the bulk sender's fill (the
// client's when write), or why it is n/a, and what measured it. It waits
// for the lookups to end.
func (r *execFillRun) finish(write bool) (model.Fill, *model.Reason, string) {
	if !r.f.measuring() {
		return model.NoFill, wire.ReasonOf(r.f.err), ""
	}
	if !r.began {
		return model.NoFill, &model.Reason{Kind: model.ReasonNotRunning, What: "the client"}, ""
	}
	r.stopOnce.Do(func() { close(r.end) })
	<-r.done
	group := execFillServer
	if write {
		group = execFillClient
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fl, src := r.take(group)
	if fl.Known() {
		return fl, nil, src
	}
	if !r.found && r.why != nil {
		return fl, r.why, ""
	}
	if src == model.FillSourceSampler {
		if err := r.f.samplerErr(); err != nil {
			return fl, wire.ReasonOf(err), ""
		}
	}
	return fl, &model.Reason{Kind: model.ReasonNoneRead, What: "while the client ran"}, ""
}

// take is the group's fill over the run from what measured it, and
// points both groups at nothing. r.mu is held.
func (r *execFillRun) take(group string) (model.Fill, string) {
	src := r.sources[group]
	fl := model.NoFill
	if k := r.f.kern; k != nil {
		if model.FillInKernel(src) {
			fl = engine.KernelFillOf(k.Take(group))
		}
		k.Set(execFillServer, nil)
		k.Set(execFillClient, nil)
	}
	r.f.mu.Lock()
	smp := r.f.smp
	r.f.mu.Unlock()
	if smp != nil {
		if src == model.FillSourceSampler {
			fl = engine.FillOf(smp.Take(group))
		}
		smp.Set(execFillServer, nil)
		smp.Set(execFillClient, nil)
	}
	fl.Source = src
	if src == model.FillSourceSampler { // the row's figures say why, as a live side's
		switch {
		case !model.FillInKernel(r.f.asked):
			fl.Sampled = model.FillSampledAsked
		case r.f.kern == nil:
			fl.Sampled = model.FillSampledNoBPF
		default:
			fl.Sampled = model.FillSampledTCP
		}
	}
	return fl, src
}

// samplerErr is why the sampler could not start, nil if it did or was
// not needed.
func (f *execFill) samplerErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
