package child

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"nbdscope/clientrun"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/probe/realproc"
	"nbdscope/probe/schedstat"
	"nbdscope/probe/sockctl"
)

// execRole is a load child whose load is a real client command (a side's
// exec setting), run in a loop against the side's server. It reports the
// client's CPU and context switches: finished runs from wait4, the run
// under way from /proc; and its socket calls, counted from its exec with
// probe/syscount where the system allows (realproc), else why not.
// Its payload is not ours to count: the controller takes it from the
// server. The side's client buffers (client-sndbuf, client-rcvbuf: the
// sender's for writes) are set on the client's own data sockets from
// outside (liveBufs), each run's within a tick of its connect.
type execRole struct {
	sched schedstat.Counter // where its time went (poll)
	argv  []string
	fail  chan error
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	paused bool
	cur    *clientrun.Process
	group  *clientrun.Group // the run under way's process group, read while it runs
	cnt    *realproc.Calls  // the run under way's, nil when not counted
	doneIO nbd.IOStats      // finished runs' socket calls, added up
	seenIO nbd.IOStats      // the highest reported
	// callsErr is why the client's calls are not counted (nil: they are).
	callsErr error
	done     clientrun.Result // finished runs, added up
	seen     clientrun.Result // the highest reading reported, so counters never go back
	runs     []float64        // seconds of the runs finished since the last poll
	// runsActive are those runs' seconds not paused, from runStart (the
	// running time when the run under way started).
	runsActive []float64
	runStart   time.Duration
	active     time.Duration // running (not paused) time, up to since
	since      time.Time     // when the current running stretch began; zero while paused
	resumed    chan struct{} // closed and replaced on each resume
	// want are the client buffers asked for (per sockctl.Option, as
	// setsockopt takes them; 0: the client's own); live follows the run
	// under way's sockets, last the one before (nil: none yet).
	want       [2]int
	live, last *liveBufs
	// idle is how many runs in a row moved no payload, as the controller
	// counted it from the server (wire.OpIdle); lastRun is how the last
	// run ended, for the failure at wire.IdleRunLimit.
	idle    int
	lastRun *clientrun.Failure
}

func startExecRole(ctx context.Context, spec wire.LoadSpec) (role, wire.Msg, error) {
	u, err := nbd.ParseURI(spec.URI)
	if err != nil {
		return nil, wire.Msg{}, err
	}
	vars := clientrun.Vars{"uri": spec.URI, "socket": u.Socket}
	if strings.Contains(spec.Exec(), "{size}") {
		size, err := exportSize(ctx, u)
		if err != nil {
			return nil, wire.Msg{}, fmt.Errorf("{size} in the command: %w", err)
		}
		vars["size"] = strconv.FormatUint(size, 10)
	}
	argv, err := clientrun.Command{Line: spec.Exec()}.Argv(vars)
	if err != nil {
		return nil, wire.Msg{}, fmt.Errorf("exec command %q: %w", spec.Exec(), err) // Split's error says where, not the line
	}
	r := &execRole{argv: argv, fail: make(chan error, 1), stop: make(chan struct{}), paused: spec.Paused, resumed: make(chan struct{})}
	r.want = [2]int{sockctl.SendBuf: spec.Settings.Int(model.SetClientSndBuf), sockctl.RecvBuf: spec.Settings.Int(model.SetClientRcvBuf)}
	r.callsErr = realproc.Probe()
	if !spec.Paused {
		r.since = time.Now()
	}
	r.wg.Add(2)
	go r.loop()
	go r.tick()
	return r, wire.Msg{}, nil
}

// exportSize asks the export for its size, as the client will see it: the
// command's {size}, as in a sweep's (a null-co image the size of the
// export). The side's server, or an external target, alike.
func exportSize(ctx context.Context, u nbd.URI) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, nbd.DefaultHandshakeTimeout)
	defer cancel()
	c, err := nbd.Dial(ctx, u, nbd.ClientOptions{})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.Info().Size, nil
}

func (r *execRole) failed() <-chan error { return r.fail }

// loop runs the command again and again while not paused.
func (r *execRole) loop() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		paused, resumed := r.paused, r.resumed
		r.mu.Unlock()
		if paused {
			select {
			case <-resumed:
				continue
			case <-r.stop:
				return
			}
		}
		if !r.backOff() {
			return
		}
		p, cnt, err := r.start()
		if err != nil {
			r.fail <- err
			return
		}
		res, err := p.Wait()
		var io nbd.IOStats
		if cnt != nil {
			io = cnt.Close()
		}
		r.mu.Lock()
		r.cur, r.cnt = nil, nil
		r.endBufs()
		r.done = addResult(r.done, res)
		r.doneIO = r.doneIO.Add(io)
		if err == nil {
			r.runs = append(r.runs, res.Seconds)
			r.runsActive = append(r.runsActive, (r.activeNow() - r.runStart).Seconds())
			r.lastRun = &clientrun.Failure{Argv: r.argv, Status: fmt.Sprintf("exit status 0 after %.3f s", res.Seconds), Stderr: p.StderrTail()}
		}
		r.mu.Unlock()
		if err != nil {
			select {
			case <-r.stop: // killed by close
			default:
				r.fail <- err
			}
			return
		}
	}
}

// start starts one run of the client, held before its exec until its
// socket calls are being counted (when they can be), so that none is
// missed.
func (r *execRole) start() (*clientrun.Process, *realproc.Calls, error) {
	r.mu.Lock()
	count := r.callsErr == nil
	r.mu.Unlock()
	var cnt *realproc.Calls
	var cerr error
	p, err := clientrun.StartHeld(r.argv, func(pid int) {
		if count {
			cnt, cerr = realproc.OpenCalls(pid)
		}
	})
	if err != nil {
		if cnt != nil {
			cnt.Close()
		}
		return nil, nil, err
	}
	r.mu.Lock()
	r.cur, r.cnt, r.group = p, cnt, clientrun.NewGroup(p.Pid())
	r.runStart = r.activeNow()
	select {
	case <-r.stop: // close signalled before this run was known: it is told now
		p.Signal(syscall.SIGTERM)
	default:
	}
	if cerr != nil {
		r.callsErr = cerr
	}
	live, berr := watchBufs(p.Pid(), r.want, "the client")
	live.carry(r.last)
	r.live = live
	r.mu.Unlock()
	if berr != nil {
		// The buffer asked for is not the client's: not a run to measure.
		berr = exitedOrRefused(p, berr)
		if cnt != nil {
			cnt.Close()
		}
		r.mu.Lock()
		r.cur, r.cnt = nil, nil
		r.endBufs()
		r.mu.Unlock()
		return nil, nil, berr
	}
	return p, cnt, nil
}

// exitedOrRefused ends a run whose buffers were refused at its start, and
// returns what to report: the client's own failure when it exits within
// exitGrace (a command that fails at once gives "process … has exited"
// from the buffer's setsockopt, which says nothing of why: the exit
// status and stderr do), else the refusal, the client killed.
func exitedOrRefused(p *clientrun.Process, refused error) error {
	exited := make(chan error, 1)
	go func() {
		_, err := p.Wait()
		exited <- err
	}()
	select {
	case err := <-exited:
		if err != nil {
			return err
		}
		return fmt.Errorf("%w (the client exited at once, with status 0)", refused)
	case <-time.After(exitGrace):
		p.Signal(syscall.SIGCONT)
		p.Signal(syscall.SIGKILL)
		<-exited
		return refused
	}
}

// tick looks at the run under way's sockets every tickEvery: a new
// connection gets the buffers asked for within one tick.
func (r *execRole) tick() {
	defer r.wg.Done()
	everyTick(r.stop, nil, func() {
		r.mu.Lock()
		if r.live != nil {
			r.live.look()
		}
		r.mu.Unlock()
	})
}

// endBufs lets the finished run's sockets go, keeping what was last seen
// of them for the polls until the next run's. r.mu is held.
func (r *execRole) endBufs() {
	if r.live != nil {
		r.live.close()
		r.last, r.live = r.live, nil
	}
}

// clientBufs are the settings that change the client's buffers, and the
// buffer each changes.
var clientBufs = map[string]sockctl.Option{model.SetClientSndBuf: sockctl.SendBuf, model.SetClientRcvBuf: sockctl.RecvBuf}

// setBuf changes buffer o of the client's data sockets now and in every
// later run (req 0: each socket's own value). Between two runs nothing is
// open: the next run gets it, and the reply says no socket was reached.
func (r *execRole) setBuf(o sockctl.Option, req int) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.want[o] = req
		return wire.Msg{}
	}
	m, gone := r.live.set(o, req, "the client")
	if gone {
		// The run ended and the next has not begun: as between runs.
		r.want[o] = req
		return wire.Msg{}
	}
	if m.Type != "error" {
		r.want[o] = req
	}
	return m
}

func addResult(a, b clientrun.Result) clientrun.Result {
	return clientrun.Result{Seconds: a.Seconds + b.Seconds, UserS: a.UserS + b.UserS, SysS: a.SysS + b.SysS,
		Nvcsw: a.Nvcsw + b.Nvcsw, Nivcsw: a.Nivcsw + b.Nivcsw, MinFlt: a.MinFlt + b.MinFlt}
}

func (r *execRole) handle(c wire.Cmd) wire.Msg {
	switch c.Op {
	case "poll":
		return r.poll()
	case "get":
		return wire.Msg{Settings: map[string]string{model.SetExec: fmt.Sprint(r.argv)}}
	case wire.OpIdle:
		r.setIdle(c.Int)
		return wire.Msg{}
	case "set":
		if c.Setting == model.SetPaused {
			r.setPaused(c.Int != 0)
			return wire.Msg{}
		}
		if o, ok := clientBufs[c.Setting]; ok {
			return r.setBuf(o, c.Int)
		}
		return wire.Msg{Type: "error", Err: "an exec side's client has its own " + strconv.Quote(c.Setting) + ": change the command instead"}
	}
	return wire.Msg{Type: "error", Err: fmt.Sprintf("exec load: unknown op %q", c.Op)}
}

// setPaused stops the client's whole process group (SIGSTOP) or lets it
// go on (SIGCONT); a pause between runs holds the next one back.
func (r *execRole) setPaused(p bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == r.paused {
		return
	}
	r.paused = p
	sig := syscall.SIGCONT
	if p {
		sig = syscall.SIGSTOP
		r.active += time.Since(r.since)
		r.since = time.Time{}
	} else {
		r.since = time.Now()
		close(r.resumed)
		r.resumed = make(chan struct{})
	}
	if r.cur != nil {
		r.cur.Signal(sig)
	}
}

func (r *execRole) poll() wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live != nil {
		r.live.look() // a connection the last tick missed has its buffers before it is reported
	}
	use := r.done
	var pids []int
	if r.cur != nil {
		if live, ok := r.group.Usage(); ok {
			use = addResult(use, live)
			pids = r.group.Members()
		}
	}
	// A process that exits between two readings takes its time out of
	// /proc until its parent waits for it: keep the counters monotonic.
	r.seen = clientrun.Result{UserS: max(r.seen.UserS, use.UserS), SysS: max(r.seen.SysS, use.SysS),
		Nvcsw: max(r.seen.Nvcsw, use.Nvcsw), Nivcsw: max(r.seen.Nivcsw, use.Nivcsw), MinFlt: max(r.seen.MinFlt, use.MinFlt)}
	active := r.activeNow()
	io := r.doneIO
	if r.cnt != nil {
		io = io.Add(r.cnt.Read())
	}
	r.seenIO = realproc.MaxIO(r.seenIO, io)
	m := wire.Msg{Counters: wire.ClientCounters(r.seen),
		ActiveNs: int64(active), Conns: 1, ExecRuns: r.runs, ExecRunsActive: r.runsActive}
	m.Counters.IO = r.seenIO
	wire.ReadSched(&r.sched, &m.Counters, pids...)
	if l := r.live; l != nil || r.last != nil {
		if l == nil {
			l = r.last
		}
		l.report(&m)
	}
	m.CallsCounted = r.callsErr == nil
	if r.callsErr != nil {
		m.CallsNA = wire.ReasonOf(r.callsErr)
	}
	r.runs, r.runsActive = nil, nil
	return m
}

// activeNow is the client's running (not paused) time so far. r.mu is
// held.
func (r *execRole) activeNow() time.Duration {
	active := r.active
	if !r.since.IsZero() {
		active += time.Since(r.since)
	}
	return active
}

// idleBackOff is the wait before the next run after n runs in a row
// moved nothing: 100 ms doubled each time, at most 2 s.
func idleBackOff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(100*time.Millisecond<<min(n-1, 5), 2*time.Second)
}

// backOff waits before the next run as idleBackOff says; false when the
// role is stopped meanwhile.
func (r *execRole) backOff() bool {
	r.mu.Lock()
	d := idleBackOff(r.idle)
	r.mu.Unlock()
	select {
	case <-r.stop: // first: with no wait, a select on both chose a new run after close half the time
		return false
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.stop:
		return false
	case <-t.C:
		return true
	}
}

// setIdle takes the controller's count of runs in a row that moved no
// payload; at wire.IdleRunLimit the role fails with the command and what
// its last run did: the side ends, the run is partial.
func (r *execRole) setIdle(n int) {
	r.mu.Lock()
	r.idle = n
	last := r.lastRun
	r.mu.Unlock()
	if n < wire.IdleRunLimit {
		return
	}
	if last == nil {
		last = &clientrun.Failure{Argv: r.argv, Status: "no run ended"}
	}
	select {
	case r.fail <- fmt.Errorf("the client moved no payload in %d runs in a row; its last run: %w", n, last):
	default: // already failing
	}
}

// close ends the run under way as a real server's group is ended:
// SIGTERM to its process group, SIGKILL after clientrun.GroupGrace if it
// has not ended by then. A client that exits on SIGTERM ends the wait at
// once; one that ignores it costs the grace (the controller waits
// ChildStopGrace for this child, longer). It was SIGKILL at once, which
// gave a client no chance to end cleanly (nbdcopy to a file, a qemu-img
// convert's target).
func (r *execRole) close() {
	close(r.stop)
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	r.signalRun(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(clientrun.GroupGrace):
		r.signalRun(syscall.SIGKILL)
		<-done
	}
	r.endBufs()
}

// signalRun sends sig to the run under way's process group, and SIGCONT
// after it, so that a paused group takes it.
func (r *execRole) signalRun(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.Signal(sig)
		r.cur.Signal(syscall.SIGCONT)
	}
}
