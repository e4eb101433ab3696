package sockdiag

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Kind says which family a Socket is.
type Kind uint8

const (
	KindUnix Kind = iota + 1
	KindTCP
)

func (k Kind) String() string {
	return nameOf(k, "kind", []string{KindUnix: "unix", KindTCP: "tcp"})
}

// nameOf is the name names gives v, or what(v) where it gives none, so
// that a value out of range still prints as itself ("kind(7)").
func nameOf[T ~uint8](v T, what string, names []string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, uint8(v))
}

// Socket is a socket processes hold, with what sock_diag says of it.
type Socket struct {
	Inode Inode
	// Holders are the processes and descriptors that hold it, in PID and
	// fd order: a forked child holds its parent's sockets too.
	Holders []FD
	Kind    Kind
	Unix    UnixSocket // when Kind is KindUnix
	TCP     TCPSocket  // when Kind is KindTCP
	// Peer is the inode of the socket at the other end: unix_diag's peer,
	// or for TCP the socket of this network namespace whose 4-tuple is this
	// one's mirrored (a loopback connection). 0 when there is none here:
	// not connected, or the other end is on another machine.
	Peer Inode
}

// Link is a connection between two sockets: A's peer is B.
type Link struct {
	A, B Socket
}

// String says who talks to whom: "PID 10 fd 5 ↔ PID 20 fd 9 (unix)".
func (l Link) String() string {
	return holderText(l.A) + " ↔ " + holderText(l.B) + " (" + l.A.Kind.String() + ")"
}

func holderText(s Socket) string {
	if len(s.Holders) == 0 {
		return fmt.Sprintf("socket %d", s.Inode)
	}
	parts := make([]string, len(s.Holders))
	for i, h := range s.Holders {
		parts[i] = h.String()
	}
	return strings.Join(parts, ", ")
}

// Links pairs the sockets of a with their peers in b: one Link for every
// socket of a whose peer is in b, A from a and B from b, in a's order. To
// see a client tree's connections to a server, pass the client's sockets
// and the server's; passing one set twice gives each connection inside it
// twice, once from each end.
func Links(a, b []Socket) []Link {
	byInode := make(map[Inode]int, len(b))
	for i, s := range b {
		byInode[s.Inode] = i
	}
	var links []Link
	for _, s := range a {
		if s.Peer == 0 {
			continue
		}
		if j, ok := byInode[s.Peer]; ok {
			links = append(links, Link{A: s, B: b[j]})
		}
	}
	return links
}

// tupleKey identifies a TCP connection by its endpoints, IPv4-mapped IPv6
// addresses unmapped so that an AF_INET6 socket talking to 127.0.0.1 and
// the AF_INET socket it reached match.
type tupleKey struct {
	local, remote netip.AddrPort
}

func tupleOf(local, remote netip.AddrPort) tupleKey {
	un := func(ap netip.AddrPort) netip.AddrPort {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return tupleKey{local: un(local), remote: un(remote)}
}

// tcpPeers maps each connected TCP socket's inode to the inode of the
// socket with the mirrored 4-tuple, where there is one.
func tcpPeers(socks []TCPSocket) map[Inode]Inode {
	byTuple := make(map[tupleKey]Inode, len(socks))
	for _, s := range socks {
		if s.Inode != 0 && s.Remote.Port() != 0 {
			byTuple[tupleOf(s.Local, s.Remote)] = s.Inode
		}
	}
	peers := make(map[Inode]Inode, len(byTuple))
	for _, s := range socks {
		if s.Inode == 0 || s.Remote.Port() == 0 {
			continue
		}
		if p, ok := byTuple[tupleOf(s.Remote, s.Local)]; ok && p != s.Inode {
			peers[s.Inode] = p
		}
	}
	return peers
}

// describe joins the descriptors processes hold with the kernel's
// listings: one Socket per unix or TCP inode among fds, in order of the
// first holder. Inodes of other socket families (UDP, netlink, …) are left
// out.
func describe(fds []FD, unixSocks []UnixSocket, tcpSocks []TCPSocket) []Socket {
	holders := make(map[Inode][]FD, len(fds))
	var order []Inode
	for _, f := range fds {
		if _, ok := holders[f.Inode]; !ok {
			order = append(order, f.Inode)
		}
		holders[f.Inode] = append(holders[f.Inode], f)
	}
	unixBy := make(map[Inode]int, len(unixSocks))
	for i, u := range unixSocks {
		unixBy[u.Inode] = i
	}
	tcpBy := make(map[Inode]int, len(tcpSocks))
	for i, t := range tcpSocks {
		if t.Inode != 0 {
			tcpBy[t.Inode] = i
		}
	}
	tcpPeer := tcpPeers(tcpSocks)
	var out []Socket
	for _, ino := range order {
		s := Socket{Inode: ino, Holders: holders[ino]}
		sortFDs(s.Holders)
		if i, ok := unixBy[ino]; ok {
			s.Kind, s.Unix, s.Peer = KindUnix, unixSocks[i], unixSocks[i].Peer
		} else if i, ok := tcpBy[ino]; ok {
			s.Kind, s.TCP, s.Peer = KindTCP, tcpSocks[i], tcpPeer[ino]
		} else {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Inodes lists the sockets' inodes, in order.
func Inodes(socks []Socket) []Inode {
	out := make([]Inode, len(socks))
	for i, s := range socks {
		out[i] = s.Inode
	}
	return slices.Clip(out)
}
