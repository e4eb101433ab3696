package child

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/probe/schedstat"
)

type serverRole struct {
	sched   schedstat.Counter // where its time went (poll)
	srv     *nbd.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	be      nbd.Backend
	req     int    // requested SO_SNDBUF; 0 = OS default
	rcvReq  int    // requested SO_RCVBUF; 0 = OS default
	network string // "unix" or "tcp": the data sockets' family
	sockDir string
	// orphaned: the controller went away without stopping us, so close
	// removes its socket directory (see orphanable).
	orphaned bool
	// seen is the buffers last read from a data socket (or the set's
	// readback), reported while no connection is open: a real client
	// that connects anew for each run is often between runs at a poll,
	// and its buffer did not become unknown then. Polls and sets run on
	// different goroutines (RunChild), hence seenMu.
	seenMu sync.Mutex
	seen   struct {
		snd, rcv int
		locked   bool
	}
}

func startServerRole(ctx context.Context, spec wire.ServerSpec) (role, wire.Msg, error) {
	backend, sndbuf := spec.Settings.Str(model.SetBackend), spec.Settings.Int(model.SetSndBuf)
	be, err := nbd.OpenBackend(backend, int64(spec.Settings.Int(model.SetSize)), nbd.BackendOptions{Fill: 0xff})
	if err != nil {
		return nil, wire.Msg{}, err
	}
	readOnly := backend == "pattern"
	r := &serverRole{be: be, req: sndbuf, rcvReq: spec.Settings.Int(model.SetServerRcvBuf), network: "unix"}
	r.srv = &nbd.Server{Exports: []nbd.Export{{Name: "", Description: "nbdscope " + backend, Backend: be, ReadOnly: readOnly}}}
	var ln net.Listener
	var uri nbd.URI
	switch model.Transport(spec.Settings.Str(model.SetTransport)) {
	case model.TransportTCP:
		tl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, wire.Msg{}, err
		}
		ln = tl
		uri = nbd.URI{Transport: "tcp", Host: "127.0.0.1", Port: tl.Addr().(*net.TCPAddr).Port}
		r.network = "tcp"
	default:
		ul, err := nbd.ListenUnix(spec.Socket)
		if err != nil {
			return nil, wire.Msg{}, err
		}
		ln = ul
		uri = nbd.URI{Transport: "unix", Socket: spec.Socket}
		r.sockDir = filepath.Dir(spec.Socket)
	}
	if sndbuf > 0 {
		r.srv.SetSocketBuffer(nbd.SendBuf, sndbuf)
	}
	if r.rcvReq > 0 {
		r.srv.SetSocketBuffer(nbd.RecvBuf, r.rcvReq)
	}
	if r.network == "unix" {
		// Known before the first connection: a unix socket gets exactly
		// what a fresh one does (TCP's depends on the connection).
		_, r.seen.snd, _ = nbd.ProbeSocketBuffer(r.network, nbd.SendBuf, sndbuf)
		_, r.seen.rcv, _ = nbd.ProbeSocketBuffer(r.network, nbd.RecvBuf, r.rcvReq)
	}
	sctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.srv.Serve(sctx, ln)
	}()
	return r, wire.Msg{URI: uri.String()}, nil
}

func (r *serverRole) handle(c wire.Cmd) wire.Msg {
	switch c.Op {
	case "poll":
		st := r.srv.Stats()
		m := wire.Msg{Counters: wire.SelfCounters(st.IO), Conns: st.Open, Accepted: st.Accepted, Payload: &st.Payload}
		wire.ReadSched(&r.sched, &m.Counters, os.Getpid())
		r.seenMu.Lock()
		if cs := r.srv.Conns(); len(cs) > 0 {
			r.seen.snd, r.seen.rcv, r.seen.locked = cs[0].SndBuf, cs[0].RcvBuf, cs[0].SndBufLocked
		}
		m.SndBuf, m.RcvBuf, m.SndBufLocked = r.seen.snd, r.seen.rcv, r.seen.locked
		r.seenMu.Unlock()
		return m
	case "get":
		return wire.Msg{Settings: map[string]string{model.SetSndBuf: strconv.Itoa(r.req), model.SetServerRcvBuf: strconv.Itoa(r.rcvReq)}}
	case "set":
		set, bad := childSetter(c, "server", serverSetters)
		if bad != nil {
			return *bad
		}
		return set(r, c)
	}
	return wire.Msg{Type: "error", Err: fmt.Sprintf("server: unknown op %q", c.Op)}
}

// serverSetters apply the server's settings (those of the table that
// apply AtServer), by setting name.
var serverSetters = map[string]func(*serverRole, wire.Cmd) wire.Msg{
	model.SetSndBuf:       func(r *serverRole, c wire.Cmd) wire.Msg { return r.setBuf(nbd.SendBuf, c.Int) },
	model.SetServerRcvBuf: func(r *serverRole, c wire.Cmd) wire.Msg { return r.setBuf(nbd.RecvBuf, c.Int) },
}

// setBuf sets SO_SNDBUF or SO_RCVBUF on the data sockets (req 0: the OS default) and
// reports the effective value read back from a real data socket.
//
// On TCP the OS default cannot be set back on an open socket: Linux locked
// its buffer when it was set and stopped autotuning it. Those sockets are
// left as they are and the reply asks for the load to re-open them; the
// new ones are never touched, so they start from the kernel's default.
// With no data socket open, a unix socket's effective value is the same
// as a fresh probe socket's; a TCP one's depends on the connection
// (autotuning), so it is left unknown until a connection reports it.
func (r *serverRole) setBuf(which nbd.SockBuf, req int) wire.Msg {
	effs, err := r.srv.SetSocketBuffer(which, req)
	if err != nil {
		return wire.Msg{Type: "error", Err: err.Error()}
	}
	seen := &r.seen.snd
	if which == nbd.RecvBuf {
		r.rcvReq, seen = req, &r.seen.rcv
	} else {
		r.req = req
	}
	m := wire.Msg{}
	switch {
	case len(effs) > 0:
		m.Effective = effs[0]
	case r.network == "tcp":
		m.Reconnect = req == 0 && r.srv.LockedTCP(which) > 0
	default:
		_, m.Effective, _ = nbd.ProbeSocketBuffer(r.network, which, req)
	}
	r.seenMu.Lock()
	*seen = m.Effective // 0 (unknown) until a TCP connection reports it
	r.seenMu.Unlock()
	return m
}

// orphan implements orphanable.
func (r *serverRole) orphan() { r.orphaned = true }

func (r *serverRole) close() {
	r.cancel()
	r.wg.Wait()
	if r.sockDir != "" && r.orphaned {
		// The controller's private directory, left behind when it was
		// killed: remove it once its last socket is gone (fails
		// harmlessly while the other side's is there).
		os.Remove(r.sockDir)
	}
	if c, ok := r.be.(nbd.Closer); ok {
		c.Close()
	}
}
