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
	"syscall"
	"time"

	"nbdscope/clientrun"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform/sockctl"
	"nbdscope/platform/sockdiag"
	"nbdscope/realproc"
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
	proc   *clientrun.Process // nil when attached to a running server (realattach.go)
	pid    int                // the server's process
	calls  *realproc.Calls    // nil when not counted (callsErr says why)
	fail   chan error
	exited chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	callsErr error
	socks    *realproc.Sockets // nil where sock_diag is not available
	bufs     *realproc.Buffers
	conns    int
	snd, rcv int              // the first data socket's buffers, as sock_diag reads them
	seenUse  clientrun.Result // the highest CPU reading, so counters never go back
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
		return nil, wire.Msg{}, fmt.Errorf("server command: %w", err)
	}
	r := &realServerRole{argv: argv, socket: spec.Socket, fail: make(chan error, 1), exited: make(chan struct{}), stop: make(chan struct{})}
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
	r.bufs = realproc.ControlBuffers(p.Pid())
	if s, err := realproc.WatchSockets(p.Pid()); err == nil {
		r.socks = s
	}
	r.wg.Add(1)
	go r.wait()
	if err := r.waitListening(ctx, addr); err != nil {
		r.close()
		return nil, wire.Msg{}, err
	}
	if sndbuf := spec.Settings.Int(model.SetSndBuf); sndbuf > 0 {
		// Applied to each connection as it comes.
		if _, _, err := r.bufs.Set(sockctl.SendBuf, sndbuf); err != nil {
			r.close()
			return nil, wire.Msg{}, fmt.Errorf("the real server's send buffer cannot be set: %s", realproc.Refusal(err))
		}
	}
	r.wg.Add(1)
	go r.tick()
	return r, wire.Msg{URI: uri.String(), RealPID: p.Pid()}, nil
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
	if err == nil {
		err = fmt.Errorf("%s: exited (status 0) while serving", cmdText(r.argv))
	}
	r.fail <- fmt.Errorf("real server: %w", err)
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
			return fmt.Errorf("exited before it listened on %s: %w", addr, errors.Unwrap(err))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("real server %s did not listen on %s within %v (%s)", cmdText(r.argv), addr, listenTimeout, where)
		}
	}
}

// listening tells whether the server listens at addr, and where it does.
// Without sock_diag (macOS) the socket file, or a TCP connect, says so.
func (r *realServerRole) listening(addr string) (bool, string) {
	if r.socks == nil {
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
	sc, err := r.socks.Scan()
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
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		r.look()
		select {
		case <-r.stop:
			return
		case <-r.exited:
			return
		case <-t.C:
		}
	}
}

func (r *realServerRole) look() {
	if r.socks == nil {
		return
	}
	sc, err := r.socks.Scan()
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bufs.Track(sc.Data)
	r.conns = len(sc.Data)
	for _, k := range sc.Data {
		if len(k.Holders) > 0 && k.Holders[0].PID == r.pid {
			r.snd, r.rcv = memSndRcv(k)
			break
		}
	}
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

func cmdText(argv []string) string { return strconv.Quote(strings.Join(argv, " ")) }

func (r *realServerRole) handle(c wire.Cmd) wire.Msg {
	switch c.Op {
	case "poll":
		return r.poll()
	case "get":
		return wire.Msg{Settings: map[string]string{model.SetServer: strings.Join(r.argv, " ")}}
	case "set":
		if c.Setting == model.SetSndBuf {
			return r.setBuf(sockctl.SendBuf, c.Int)
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
	if use, ok := clientrun.GroupUsage(r.pid); ok {
		r.seenUse = clientrun.Result{UserS: max(r.seenUse.UserS, use.UserS), SysS: max(r.seenUse.SysS, use.SysS),
			Nvcsw: max(r.seenUse.Nvcsw, use.Nvcsw), Nivcsw: max(r.seenUse.Nivcsw, use.Nivcsw), MinFlt: max(r.seenUse.MinFlt, use.MinFlt)}
	}
	m := wire.Msg{Counters: wire.ClientCounters(r.seenUse), Conns: r.conns, SndBuf: r.snd, RcvBuf: r.rcv,
		OwnSndBuf: r.bufs.Own(sockctl.SendBuf)}
	if r.calls != nil {
		m.Counters.IO = r.calls.Read()
	}
	m.CallsCounted = r.callsErr == nil
	if r.callsErr != nil {
		m.CallsNA, m.CallsFix = realproc.NA(r.callsErr)
	}
	return m
}

// setBuf changes buffer o of every data socket of the server now, and of
// every later one at its first tick (req 0: each socket's own value).
// The reply has the effective value read back from a real socket and how
// many sockets the change reached; a refusal names its reason.
func (r *realServerRole) setBuf(o sockctl.Option, req int) wire.Msg {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.bufs.Err(); err != nil {
		return wire.Msg{Type: "error", Err: "the real server's buffers cannot be changed: " + realproc.Refusal(err)}
	}
	reached, eff, err := r.bufs.Set(o, req)
	if err != nil {
		return wire.Msg{Type: "error", Err: "the real server's buffers cannot be changed: " + realproc.Refusal(err)}
	}
	if reached > 0 && o == sockctl.SendBuf {
		r.snd = eff
	}
	return wire.Msg{Effective: eff, Reached: reached}
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
		case <-time.After(2 * time.Second):
			r.proc.Signal(syscall.SIGKILL)
		}
	}
	r.wg.Wait()
	r.calls.Close()
	r.bufs.Close()
	if r.socks != nil {
		r.socks.Close()
	}
	if r.socket != "" {
		os.Remove(r.socket)
	}
}
