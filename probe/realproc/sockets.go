package realproc

import (
	"fmt"
	"strings"

	"nbdscope/probe/sockdiag"
)

// Sockets looks at a real process tree's sockets: the ones it listens on
// and the connected ones that carry its data.
type Sockets struct {
	pid  int
	conn *sockdiag.Conn
}

// WatchSockets starts looking at pid's tree (pid and everything it
// started). The error is a *sockdiag.NotAvailableError where sockets
// cannot be described (off Linux and macOS).
func WatchSockets(pid int) (*Sockets, error) {
	c, err := sockdiag.Dial()
	if err != nil {
		return nil, err
	}
	return &Sockets{pid: pid, conn: c}, nil
}

// Scan is the tree's sockets now: listeners (unix or TCP in the listen
// state) and data sockets (connected stream sockets, the listener's
// accepted connections among them).
type Scan struct {
	Listeners []sockdiag.Socket
	Data      []sockdiag.Socket
}

// Scan lists the tree's sockets now.
func (s *Sockets) Scan() (Scan, error) {
	fds, err := sockdiag.TreeSockets(s.pid)
	if err != nil {
		return Scan{}, err
	}
	socks, err := s.conn.Describe(fds)
	if err != nil {
		return Scan{}, err
	}
	var sc Scan
	for _, k := range socks {
		switch {
		case isListener(k):
			sc.Listeners = append(sc.Listeners, k)
		case isData(k):
			sc.Data = append(sc.Data, k)
		}
	}
	return sc, nil
}

// tcpListen and tcpEstablished are the kernel's TCP states.
const (
	tcpEstablished = 1
	tcpListen      = 10
)

func isListener(k sockdiag.Socket) bool {
	switch k.Kind {
	case sockdiag.KindUnix:
		return k.Unix.State == sockdiag.StateListen
	case sockdiag.KindTCP:
		return k.TCP.State == tcpListen
	}
	return false
}

func isData(k sockdiag.Socket) bool {
	switch k.Kind {
	case sockdiag.KindUnix:
		return k.Unix.Type == sockdiag.TypeStream && k.Unix.State == sockdiag.StateEstablished
	case sockdiag.KindTCP:
		return k.TCP.State == tcpEstablished
	}
	return false
}

// ListensOn tells whether the scan has a listener at addr: a unix
// socket's path, or ":PORT" for TCP.
func (sc Scan) ListensOn(addr string) bool {
	for _, l := range sc.Listeners {
		if listenerAddr(l) == addr {
			return true
		}
	}
	return false
}

// ListenAddrs are where the tree listens, for an error that says it
// listens somewhere else.
func (sc Scan) ListenAddrs() string {
	var a []string
	for _, l := range sc.Listeners {
		a = append(a, listenerAddr(l))
	}
	if len(a) == 0 {
		return "nowhere"
	}
	return strings.Join(a, ", ")
}

func listenerAddr(l sockdiag.Socket) string {
	if l.Kind == sockdiag.KindTCP {
		return fmt.Sprintf(":%d", l.TCP.Local.Port())
	}
	return l.Unix.Name
}

// Close stops looking.
func (s *Sockets) Close() error { return s.conn.Close() }
