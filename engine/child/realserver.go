package child

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"nbdscope/clientrun"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/probe/realproc"
	"nbdscope/probe/sockctl"
	"nbdscope/probe/sockdiag"
	"nbdscope/shellword"
)

// realServerRole is a server child whose server is a real program (a
// side's server setting: qemu-nbd, nbdkit …), as the exec role is a load
// child whose load is a real client. It starts the command held until its
// socket calls are being counted, waits until it listens where it was
// told, and then reports it as our server child reports itself: its
// socket calls (realproc.Calls), its CPU, wake-ups and faults from /proc,
// its data sockets' send buffer (sock_diag), which it changes live through
// realproc.Buffers on every connection within one tick (tickEvery). Its
// payload is the load's: the controller has it. Its exit is the role's
// failure: the child exits 1 with the status and the end of its stderr.
type realServerRole struct {
	argv   []string
	socket string             // unix: the path it listens on, removed at close
	addr   string             // where it is to listen: the socket's path, or ":PORT"
	up     atomic.Bool        // it listened: an exit from now on is one while serving
	proc   *clientrun.Process // nil when attached to a running server (realattach.go)
	pid    int                // the server's process
	calls  *realproc.Calls    // nil when not counted (callsErr says why)
	fail   chan error
	exited chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	callsErr error
	live     *liveBufs        // its data sockets and their buffers
	seenUse  clientrun.Result // the highest CPU reading, so counters never go back
	group    *clientrun.Group // the server's process group from the first poll on
	closing  bool
}

// listenTimeout bounds the wait for a real server to listen.
const listenTimeout = 10 * time.Second

// tickEvery is how often the role looks for new connections, to count
// their calls and set their buffers: within one tick of the accept.
const tickEvery = 50 * time.Millisecond

func startRealServerRole(ctx context.Context, spec wire.ServerSpec) (role, wire.Msg, error) {
	vars := clientrun.Vars{"size": strconv.Itoa(spec.Settings.Int(model.SetSize))}
	addr, uri := spec.Socket, nbd.URI{Transport: "unix", Socket: spec.Socket}
	if model.Transport(spec.Settings.Str(model.SetTransport)) == model.TransportTCP {
		port, err := freePort()
		if err != nil {
			return nil, wire.Msg{}, err
		}
		vars["port"] = strconv.Itoa(port)
		addr, uri = ":"+strconv.Itoa(port), nbd.URI{Transport: "tcp", Host: "127.0.0.1", Port: port}
	} else {
		vars["socket"] = spec.Socket
	}
	argv, err := clientrun.Command{Line: spec.Command()}.Argv(vars)
	if err != nil {
		return nil, wire.Msg{}, fmt.Errorf("server command %q: %w", spec.Command(), err)
	}
	r := &realServerRole{argv: argv, socket: spec.Socket, addr: addr, fail: make(chan error, 1), exited: make(chan struct{}), stop: make(chan struct{})}
	r.callsErr = realproc.Probe()
	p, err := clientrun.StartHeld(argv, func(pid int) {
		if r.callsErr == nil {
			r.calls, r.callsErr = realproc.OpenCalls(pid)
		}
	})
	if err != nil {
		r.calls.Close()
		return nil, wire.Msg{}, err
	}
	r.proc, r.pid = p, p.Pid()
	r.live, err = watchBufs(p.Pid(), wantBufs(spec), "the real server")
	r.wg.Add(1)
	go r.wait()
	if err != nil {
		err = r.exitedFirst(addr, err)
		r.close()
		return nil, wire.Msg{}, err
	}
	if spec.RunDir != "" {
		var stop func()
		ctx, stop = whileRunDir(ctx, spec.RunDir)
		defer stop()
	}
	if err := r.waitListening(ctx, addr); err != nil {
		r.close()
		return nil, wire.Msg{}, err
	}
	r.up.Store(true)
	r.wg.Add(1)
	go r.tick()
	return r, wire.Msg{URI: uri.String(), RealPID: p.Pid()}, nil
}

// wantBufs are the server buffers the side asks for at the start, per
// sockctl.Option (0: the process's own), applied to each connection as it
// comes.
func wantBufs(spec wire.ServerSpec) [2]int {
	var want [2]int
	for _, b := range realServerBufs {
		want[b.opt] = spec.Settings.Int(b.setting)
	}
	return want
}

// realServerBufs are the settings that change a real server's socket
// buffers, and the buffer each changes.
var realServerBufs = []struct {
	setting string
	opt     sockctl.Option
}{
	{model.SetSndBuf, sockctl.SendBuf},
	{model.SetServerRcvBuf, sockctl.RecvBuf},
}

// freePort is a loopback TCP port free now, for {port}.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port for {port}: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// wait reaps the server; an exit that close did not ask for fails the
// role.
func (r *realServerRole) wait() {
	defer r.wg.Done()
	_, err := r.proc.Wait()
	close(r.exited)
	r.mu.Lock()
	closing := r.closing
	r.mu.Unlock()
	if closing {
		return
	}
	r.fail <- r.fault(err)
}

// fault is the server's exit (err from its Wait) in the one format of a
// process's fault, said once: when it ended (before it listened, or while
// serving), the command shell-quoted, how it ended, its stderr's tail.
func (r *realServerRole) fault(err error) error {
	var f *clientrun.Failure
	if !errors.As(err, &f) {
		f = &clientrun.Failure{Argv: r.argv, Status: "exit status 0", Stderr: r.proc.StderrTail()}
	}
	when := "while serving"
	if !r.up.Load() {
		when = "before it listened on " + r.addr
	}
	return fmt.Errorf("real server exited %s: %w", when, f)
}

// exitGrace is how long a refused buffer waits for the server's exit
// to be reaped, in case the exit was the refusal's cause.
const exitGrace = 500 * time.Millisecond

// exitedFirst is the error to report for a buffer refused at the start:
// the server's exit, when it has exited (a command that fails at once
// gives "process … has exited" from the buffer's setsockopt, which says
// nothing of why), else the refusal itself.
func (r *realServerRole) exitedFirst(addr string, refused error) error {
	select {
	case err := <-r.fail:
		return err
	case <-time.After(exitGrace):
		return refused
	}
}

// waitListening waits until the server listens at addr (its socket's
// path, or ":PORT"), without connecting to it (qemu-nbd without -t serves
// one client and exits). It fails when the server exits first, or does
// not listen there within listenTimeout, saying where it listens instead.
func (r *realServerRole) waitListening(ctx context.Context, addr string) error {
	deadline := time.Now().Add(listenTimeout)
	where := "it listens nowhere"
	for {
		ok, at := r.listening(addr)
		if ok {
			return nil
		}
		if at != "" && at != "nowhere" {
			where = "it listens on " + at
		}
		select {
		case err := <-r.fail:
			return err
		case <-ctx.Done():
			return context.Cause(ctx) // a signal, or the run's end (whileRunDir)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("real server %s did not listen on %s within %v (%s)", shellword.Join(r.argv), addr, listenTimeout, where)
		}
	}
}

// listening tells whether the server listens at addr, and where it does.
// Without sock_diag (macOS) the socket file, or a TCP connect, says so.
func (r *realServerRole) listening(addr string) (bool, string) {
	if r.live.socks == nil {
		if addr[0] == ':' {
			c, err := net.DialTimeout("tcp", "127.0.0.1"+addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil, ""
		}
		fi, err := os.Stat(addr)
		return err == nil && fi.Mode()&os.ModeSocket != 0, ""
	}
	sc, err := r.live.socks.Scan()
	if err != nil {
		return false, ""
	}
	return sc.ListensOn(addr), sc.ListenAddrs()
}

func (r *realServerRole) failed() <-chan error { return r.fail }

// tick looks at the server's sockets every tickEvery: new connections get
// the buffer in force; the poll reports what the last look saw.
func (r *realServerRole) tick() {
	defer r.wg.Done()
	everyTick(r.stop, r.exited, r.look)
}

// everyTick calls look at once and then every tickEvery, until stop or
// exited closes (a nil channel never does).
func everyTick(stop, exited <-chan struct{}, look func()) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		look()
		select {
		case <-stop:
			return
		case <-exited:
			return
		case <-t.C:
		}
	}
}

func (r *realServerRole) look() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live.look()
}

// memSndRcv are a socket's SO_SNDBUF and SO_RCVBUF as the kernel holds
// them (sock_diag's SK_MEMINFO: what getsockopt reads).
func memSndRcv(k sockdiag.Socket) (snd, rcv int) {
	m := k.Unix.Mem
	if k.Kind == sockdiag.KindTCP {
		m = k.TCP.Mem
	}
	return int(m.Sndbuf), int(m.Rcvbuf)
}

func (r *realServerRole) handle(c wire.Cmd) wire.Msg {
	switch c.Op {
	case "poll":
		return r.poll()
	case wire.OpPeer:
		r.mu.Lock()
		r.live.onlyPeersOf(c.Int)
		r.live.look()
		r.mu.Unlock()
		return wire.Msg{}
	case "get":
		return wire.Msg{Settings: map[string]string{model.SetServer: strings.Join(r.argv, " ")}}
	case "set":
		for _, b := range realServerBufs {
			if c.Setting == b.setting {
				return r.setBuf(b.opt, c.Int)
			}
		}
		return wire.Msg{Type: "error", Err: "a real server side's " + strconv.Quote(c.Setting) + " is the server's own: change the command instead"}
	}
	return wire.Msg{Type: "error", Err: fmt.Sprintf("real server: unknown op %q", c.Op)}
}

// poll reports the real server's counters: its socket calls, its tree's
// CPU, switches and faults from /proc (monotonic: a process that exits
// takes its time out of /proc), its data sockets and their buffers.
func (r *realServerRole) poll() wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live.look() // a connection the last tick missed has its buffers before it is reported
	if r.group == nil {
		r.group = clientrun.NewGroup(r.pid)
	}
	if use, ok := r.group.Usage(); ok {
		r.seenUse = clientrun.Result{UserS: max(r.seenUse.UserS, use.UserS), SysS: max(r.seenUse.SysS, use.SysS),
			Nvcsw: max(r.seenUse.Nvcsw, use.Nvcsw), Nivcsw: max(r.seenUse.Nivcsw, use.Nivcsw), MinFlt: max(r.seenUse.MinFlt, use.MinFlt)}
	}
	m := wire.Msg{Counters: wire.ClientCounters(r.seenUse), Conns: r.live.conns}
	r.live.report(&m)
	if r.calls != nil {
		m.Counters.IO = r.calls.Read()
	}
	m.CallsCounted = r.callsErr == nil
	if r.callsErr != nil {
		m.CallsNA = wire.ReasonOf(r.callsErr)
	}
	return m
}

// setBuf changes buffer o of every data socket of the server now, and of
// every later one at its first tick (req 0: each socket's own value).
func (r *realServerRole) setBuf(o sockctl.Option, req int) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, _ := r.live.set(o, req, "the real server") // its exit is reported as a crash
	return m
}

// close ends the server: SIGTERM to its process group, SIGKILL after a
// grace, and its socket removed if it left it behind.
func (r *realServerRole) close() {
	r.mu.Lock()
	already := r.closing
	r.closing = true
	r.mu.Unlock()
	if already {
		return
	}
	close(r.stop)
	if r.proc != nil { // an attached server is not ours to end
		r.proc.Signal(syscall.SIGCONT)
		r.proc.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(clientrun.GroupGrace):
			r.proc.Signal(syscall.SIGKILL)
		}
	}
	r.wg.Wait()
	r.calls.Close()
	r.live.close()
	if r.socket != "" {
		os.Remove(r.socket)
	}
}
