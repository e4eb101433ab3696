//go:build linux

package sockdiag

import (
	"errors"
	"net"
	"path/filepath"
	"slices"
	"testing"
)

// liveSeeds captures real replies of this kernel: dumps and exact lookups
// of sockets the test opens (a pair with queued data, a named listener
// and its connection, TCP over IPv4 and IPv6), and the error reply to a
// lookup of a closed socket.
func liveSeeds(tb testing.TB, family string) []seed {
	c, err := Dial()
	if err != nil {
		tb.Logf("no live seeds: %v", err)
		return nil
	}
	defer c.Close()
	var seeds []seed
	c.tap = func(d []byte) { seeds = append(seeds, seed{data: slices.Clone(d), seq: c.seq}) }
	if family == "unix" {
		unixSeeds(tb, c)
	} else {
		tcpSeeds(tb, c)
	}
	return seeds
}

func unixSeeds(tb testing.TB, c *Conn) {
	p := newSocketPair(tb)
	fillNonblocking(tb, p.fd[0])
	path := filepath.Join(tb.TempDir(), "seed.sock")
	if ln, err := net.Listen("unix", path); err == nil {
		defer ln.Close()
		if cl, err := net.Dial("unix", path); err == nil {
			defer cl.Close()
		}
	}
	c.UnixSockets(nil)
	c.UnixSocket(p.ino[0], NoCookie)
	c.UnixSocket(p.ino[1], NoCookie)
	p.closeBoth()
	c.UnixSocket(p.ino[0], NoCookie) // ENOENT
}

func tcpSeeds(tb testing.TB, c *Conn) {
	for _, n := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		ln, err := net.Listen(n.network, n.addr)
		if err != nil {
			continue
		}
		defer ln.Close()
		cl, err := net.Dial(n.network, ln.Addr().String())
		if err != nil {
			continue
		}
		defer cl.Close()
		sv, err := ln.Accept()
		if err != nil {
			continue
		}
		defer sv.Close()
		cl.Write(make([]byte, 100000))
	}
	socks, _ := c.TCPSockets(nil)
	for _, s := range socks {
		c.TCPSocket(s)
	}
}

// TestLiveSeedsParse: every real reply the fuzz seeds hold parses, the
// only error being the lookup of the closed socket (gone).
func TestLiveSeedsParse(t *testing.T) {
	unixSeeds, tcpSeeds := liveSeeds(t, "unix"), liveSeeds(t, "tcp")
	if len(unixSeeds) < 4 || len(tcpSeeds) < 3 {
		t.Fatalf("%d unix and %d tcp seeds captured", len(unixSeeds), len(tcpSeeds))
	}
	var gone, socks int
	for _, s := range unixSeeds {
		got, _, err := ParseUnixDiag(s.data, s.seq, nil)
		if errors.Is(err, ErrGone) {
			gone++
		} else if err != nil {
			t.Errorf("real unix reply: %v", err)
		}
		socks += len(got)
	}
	for _, s := range tcpSeeds {
		got, _, err := ParseInetDiag(s.data, s.seq, nil)
		if err != nil {
			t.Errorf("real inet reply: %v", err)
		}
		socks += len(got)
	}
	if gone != 1 || socks < 8 {
		t.Errorf("%d gone replies, %d sockets in all", gone, socks)
	}
}
