package sweep

import (
	"context"
	"sync"
	"time"

	"nbdscope/engine"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/probe/sockdiag"
)

// The send-buffer fill of an exec sweep's runs: the server is our child
// (the bulk sender for reads), the client the exec'd command's process
// tree (the sender for writes). While a client runs, the data connections
// between the two are looked up again and again (a client connects after
// it starts, nbdcopy opens several), both ways, and sampled from outside
// by one sampler for the sweep, as a live side's are (engine/fill.go).
// After the run the direction the payload went picks the sender's fill.

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

// Sampler groups: the server sending (reads), the client sending (writes).
const (
	execFillServer = "server"
	execFillClient = "client"
)

// execFill is the sweep's fill sampler; err says why there is none.
type execFill struct {
	smp  *sockdiag.Sampler
	conn *sockdiag.Conn
	err  error
}

// startExecFill starts sampling for a sweep; a failure (no sock_diag here)
// leaves every run's fill n/a with the reason.
func startExecFill(ctx context.Context) *execFill {
	conn, err := sockdiag.Dial()
	if err != nil {
		return &execFill{err: err}
	}
	smp, err := sockdiag.StartSampler(ctx, sockdiag.SamplerConfig{Rate: sockdiag.DefaultRate})
	if err != nil {
		conn.Close()
		return &execFill{err: err}
	}
	return &execFill{smp: smp, conn: conn}
}

// stop ends the sampling.
func (f *execFill) stop() {
	if f.smp == nil {
		return
	}
	f.smp.Stop()
	f.conn.Close()
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
}

// watch begins following a run against the server with serverPID; its
// started is the client's start hook (clientrun.RunNotify).
func (f *execFill) watch(serverPID int) *execFillRun {
	r := &execFillRun{f: f, serverPID: serverPID, end: make(chan struct{}), done: make(chan struct{})}
	if f.smp != nil {
		f.smp.Take(execFillServer) // what earlier runs left
		f.smp.Take(execFillClient)
	}
	return r
}

// started follows the client with pid until finish.
func (r *execFillRun) started(pid int) {
	r.began = true // before RunNotify waits, in its caller's goroutine
	if r.f.smp == nil {
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

// lookup points the sampler at the run's data connections, both ways,
// and tells whether one has been found.
func (r *execFillRun) lookup(pid int) bool {
	srv, cli := engine.FillProc{PID: r.serverPID}, engine.FillProc{PID: pid, Tree: true}
	toClient, err := engine.DataSenders(r.f.conn, srv, cli)
	toServer, _ := engine.DataSenders(r.f.conn, cli, srv)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if err != nil && !r.found {
		r.why, _ = engine.FillReason(err)
	}
	if len(toClient) > 0 {
		r.found = true
		r.f.smp.SetHeld(execFillServer, toClient)
	}
	if len(toServer) > 0 {
		r.f.smp.SetHeld(execFillClient, toServer)
	}
	return r.found
}

// finish ends following the run and gives the bulk sender's fill (the
// client's when write), or why it is n/a. It waits for the lookups to end.
func (r *execFillRun) finish(write bool) (model.Fill, *model.Reason) {
	if r.f.smp == nil {
		return model.NoFill, wire.ReasonOf(r.f.err)
	}
	if !r.began {
		return model.NoFill, &model.Reason{Kind: model.ReasonNotRunning, What: "the client"}
	}
	r.stopOnce.Do(func() { close(r.end) })
	<-r.done
	group := execFillServer
	if write {
		group = execFillClient
	}
	fl := engine.FillOf(r.f.smp.Take(group))
	r.f.smp.Set(execFillServer, nil)
	r.f.smp.Set(execFillClient, nil)
	if fl.Known() {
		return fl, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.found && r.why != nil {
		return fl, r.why
	}
	return fl, &model.Reason{Kind: model.ReasonNoneRead, What: "while the client ran"}
}
