package nbd

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestTCPDefaultLeavesOpenSocketsLocked: on TCP, "default" cannot be set
// back on an open socket (any setsockopt keeps Linux's lock and stops
// autotuning), so SetSocketBuffer(0) leaves open TCP sockets alone and says
// how many stay locked, and a socket accepted afterwards is never touched.
func TestTCPDefaultLeavesOpenSocketsLocked(t *testing.T) {
	srv := &Server{Exports: []Export{{Backend: NewNull(1<<20, 0xff)}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	ts := &testServer{srv: srv, uri: URI{Transport: "tcp", Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}}

	c1 := dial(t, ts, ClientOptions{SndBuf: 64 << 10})
	if _, err := c1.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	if !c1.Conn().BufferLocked(SendBuf) || c1.Conn().BufferLocked(RecvBuf) || !c1.Conn().TCP() {
		t.Fatalf("client socket: sndbuf locked %v, rcvbuf locked %v, tcp %v", c1.Conn().BufferLocked(SendBuf), c1.Conn().BufferLocked(RecvBuf), c1.Conn().TCP())
	}
	if n := srv.LockedTCP(SendBuf); n != 0 {
		t.Fatalf("%d locked server sockets before any set", n)
	}
	effs, err := srv.SetSocketBuffer(SendBuf, 64<<10)
	if err != nil || len(effs) != 1 || effs[0] != 2*64<<10 && effs[0] != 64<<10 {
		t.Fatalf("set 64k: %v %v", effs, err)
	}
	if n := srv.LockedTCP(SendBuf); n != 1 {
		t.Fatalf("after set: %d locked sockets, want 1", n)
	}
	effs, err = srv.SetSocketBuffer(SendBuf, 0)
	if err != nil || len(effs) != 0 {
		t.Fatalf("default on open TCP sockets: set %v (%v), want them left alone", effs, err)
	}
	if n := srv.LockedTCP(SendBuf); n != 1 {
		t.Fatalf("after default: %d locked sockets, want the open one still locked", n)
	}
	c1.Close()
	c2 := dial(t, ts, ClientOptions{})
	if _, err := c2.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.Stats().Open != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the first connection's close
	}
	ci := srv.Conns()
	if len(ci) != 1 || ci[0].SndBufLocked || srv.LockedTCP(SendBuf) != 0 {
		t.Fatalf("a connection opened after default: %+v, locked %d; want an untouched socket", ci, srv.LockedTCP(SendBuf))
	}
}
