package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"nbdscope/nbd"
)

type serverRole struct {
	srv     *nbd.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	be      nbd.Backend
	req     int // requested SO_SNDBUF; 0 = OS default
	sockDir string
}

func startServerRole(ctx context.Context, spec serverSpec) (role, childMsg, error) {
	be, err := nbd.OpenBackend(spec.Backend, spec.Size, nbd.BackendOptions{Fill: 0xff})
	if err != nil {
		return nil, childMsg{}, err
	}
	readOnly := spec.Backend == "pattern"
	r := &serverRole{be: be, req: spec.SndBuf}
	r.srv = &nbd.Server{Exports: []nbd.Export{{Name: "", Description: "nbdscope " + spec.Backend, Backend: be, ReadOnly: readOnly}}}
	var ln net.Listener
	var uri nbd.URI
	switch spec.Transport {
	case "tcp":
		tl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, childMsg{}, err
		}
		ln = tl
		uri = nbd.URI{Transport: "tcp", Host: "127.0.0.1", Port: tl.Addr().(*net.TCPAddr).Port}
	default:
		ul, err := nbd.ListenUnix(spec.Socket)
		if err != nil {
			return nil, childMsg{}, err
		}
		ln = ul
		uri = nbd.URI{Transport: "unix", Socket: spec.Socket}
		r.sockDir = filepath.Dir(spec.Socket)
	}
	if spec.SndBuf > 0 {
		r.srv.SetSocketBuffer(nbd.SendBuf, spec.SndBuf)
	}
	sctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.srv.Serve(sctx, ln)
	}()
	return r, childMsg{URI: uri.String()}, nil
}

func (r *serverRole) handle(c childCmd) childMsg {
	switch c.Op {
	case "poll":
		st := r.srv.Stats()
		u, s := selfCPU()
		m := childMsg{Counters: Counters{IO: st.IO, UserS: u, SysS: s}, Conns: st.Open}
		if cs := r.srv.Conns(); len(cs) > 0 {
			m.SndBuf, m.RcvBuf = cs[0].SndBuf, cs[0].RcvBuf
		}
		return m
	case "get":
		return childMsg{Settings: map[string]string{SetSndBuf: strconv.Itoa(r.req)}}
	case "set":
		if c.Setting != SetSndBuf {
			return childMsg{Type: "error", Err: fmt.Sprintf("server: cannot set %q", c.Setting)}
		}
		effs, err := r.srv.SetSocketBuffer(nbd.SendBuf, c.Int)
		if err != nil {
			return childMsg{Type: "error", Err: err.Error()}
		}
		r.req = c.Int
		m := childMsg{}
		if len(effs) > 0 {
			m.Effective = effs[0]
		} else {
			_, m.Effective, _ = nbd.ProbeSocketBuffer("unix", nbd.SendBuf, c.Int)
		}
		return m
	}
	return childMsg{Type: "error", Err: fmt.Sprintf("server: unknown op %q", c.Op)}
}

func (r *serverRole) close() {
	r.cancel()
	r.wg.Wait()
	if r.sockDir != "" {
		// The controller's private directory: remove it once its last
		// socket is gone (fails harmlessly while the other side's is there).
		os.Remove(r.sockDir)
	}
	if c, ok := r.be.(nbd.Closer); ok {
		c.Close()
	}
}
