package engine

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// freshTCPSndBuf is the SO_SNDBUF of a loopback TCP socket that was never
// set, read on the accepting end right after the connection is made (the
// kernel sizes it at connect; autotuning only grows it from there).
func freshTCPSndBuf(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed := make(chan net.Conn, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			dialed <- nil
			return
		}
		dialed <- c
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d := <-dialed; d != nil {
		defer d.Close()
		go io.Copy(io.Discard, d)
	}
	raw, _ := c.(*net.TCPConn).SyscallConn()
	v, err := nbd.GetSocketBuffer(raw, nbd.SendBuf)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// wmemMax is net.core.wmem_max, or 0 when it cannot be read.
func wmemMax() int {
	b, err := os.ReadFile("/proc/sys/net/core/wmem_max")
	if err != nil {
		return 0
	}
	v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return v
}

// pollChild asks a child for its counters.
func pollChild(t *testing.T, c *child) wire.Msg {
	t.Helper()
	m, err := c.call(wire.Cmd{Op: "poll"}, 10*time.Second)
	if err != nil {
		t.Fatalf("%s %s poll: %v", c.side, c.role, err)
	}
	return m
}

// pollOneConn polls a server child until only one connection is open (the
// old one of a re-opened pair is closed once the server has read its DISC).
func pollOneConn(t *testing.T, srv *child) wire.Msg {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m := pollChild(t, srv)
		if m.Conns == 1 {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("server has %d connections, want 1", m.Conns)
		}
	}
}

// waitEvent waits for the Event of a change and returns it.
func waitEvent(t *testing.T, p *Pair, side, setting, to string) *model.Event {
	t.Helper()
	return waitFor(t, p, 20*time.Second, side+" "+setting+"="+to+" event", func(u model.Update) bool {
		return u.Event != nil && string(u.Event.Side) == side && u.Event.Setting == setting && u.Event.To == to
	}).Event
}

// applyAndWait applies a setting of a side and waits for the event that
// says it took.
func applyAndWait(t *testing.T, p *Pair, side int, setting, to string) *model.Event {
	t.Helper()
	if err := applyText(p, side, setting, to); err != nil {
		t.Fatal(err)
	}
	return waitEvent(t, p, p.sides[side].name, setting, to)
}

// TestTCPDefaultReopens (issue 13): on Linux, setting SO_SNDBUF locks a
// TCP socket's buffer and turns autotuning off for good, so going back to
// "default" re-opens the side's connections. After default → 64k →
// default, the server's data socket is a new, never-set one (not locked),
// its effective buffer is what a fresh socket gets (not the locked 64k
// value, nor the OS default set back explicitly where wmem_max makes that
// tell), and the event says the side reconnected. The same for the
// client's send buffer.
func TestTCPDefaultReopens(t *testing.T) {
	cfg := testConfig()
	cfg.Sides[1].Transport = model.TransportTCP
	cfg.Sides[1].SndBuf = model.Buf{}
	cfg.Sides[1].ClientSndBuf = model.Buf{}
	p := startPair(t, cfg)
	if err := p.SetPaused(0, true); err != nil { // A is not part of this test
		t.Fatal(err)
	}
	fresh := freshTCPSndBuf(t)
	srv, ld := p.sides[1].children()
	waitFor(t, p, 10*time.Second, "B sample", activeSample("B"))
	if m := pollChild(t, srv); m.SndBufLocked || m.SndBuf < fresh {
		t.Fatalf("B's server socket at the start: sndbuf %d locked %v; a fresh socket has %d", m.SndBuf, m.SndBufLocked, fresh)
	}

	// 64k: set on the open socket, which the kernel now locks.
	if ev := applyAndWait(t, p, 1, model.SetSndBuf, "64k"); ev.Reconnected {
		t.Fatalf("64k re-opened the connections: %+v", ev)
	}
	_, locked64k, _ := nbd.ProbeSocketBuffer("tcp", nbd.SendBuf, 64<<10)
	if m := pollChild(t, srv); !m.SndBufLocked || m.SndBuf != locked64k {
		t.Fatalf("after 64k: sndbuf %d locked %v, want %d locked", m.SndBuf, m.SndBufLocked, locked64k)
	}

	// default: the connections are re-opened, the new sockets never set.
	if ev := applyAndWait(t, p, 1, model.SetSndBuf, "default"); !ev.Reconnected {
		t.Fatalf("back to default without re-opening the connections: %+v", ev)
	}
	waitFor(t, p, 10*time.Second, "B sample after default", activeSample("B"))
	m := pollOneConn(t, srv)
	if m.SndBufLocked || m.SndBuf == locked64k || m.SndBuf < fresh {
		t.Fatalf("after default: sndbuf %d locked %v; want an unlocked socket with at least a fresh socket's %d", m.SndBuf, m.SndBufLocked, fresh)
	}
	// What setting "default" back explicitly would have given: the fresh
	// value asked for again, clamped by wmem_max, and locked.
	explicit := 2 * min(nbd.RequestForEffective(fresh), wmemMax())
	t.Logf("B server SO_SNDBUF: fresh %d, 64k %d (locked), back to default %d (unlocked); set back explicitly it would be %d, locked (wmem_max %d)%s",
		fresh, locked64k, m.SndBuf, explicit, wmemMax(), map[bool]string{true: ": the same value, so here only the socket's history tells a lock", false: ""}[explicit >= fresh])

	// The client's send buffer, the same way.
	applyAndWait(t, p, 1, model.SetClientSndBuf, "64k")
	if m := pollChild(t, ld); !m.SndBufLocked || m.SndBuf != locked64k {
		t.Fatalf("client after 64k: sndbuf %d locked %v, want %d locked", m.SndBuf, m.SndBufLocked, locked64k)
	}
	if ev := applyAndWait(t, p, 1, model.SetClientSndBuf, "default"); !ev.Reconnected {
		t.Fatalf("client back to default without re-opening: %+v", ev)
	}
	waitFor(t, p, 10*time.Second, "B sample after client default", activeSample("B"))
	if m := pollChild(t, ld); m.SndBufLocked || m.SndBuf == locked64k || m.SndBuf < fresh {
		t.Fatalf("client after default: sndbuf %d locked %v; want unlocked, at least %d", m.SndBuf, m.SndBufLocked, fresh)
	}
	if m := pollOneConn(t, srv); m.SndBufLocked {
		t.Fatal("the server's new socket was locked after the client re-opened")
	}
	rep := p.Report()
	for _, sd := range rep.Sides {
		if sd.Name == "B" && (sd.Summary.ErrorCount() != 0 || sd.Summary.Bytes == 0) {
			t.Fatalf("B over the run: %+v", sd.Summary)
		}
	}
}
