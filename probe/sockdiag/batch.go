package sockdiag

import (
	"errors"
	"fmt"
)

// A batch is many exact lookups sent in one sendmsg: the kernel answers
// each message of a request datagram in turn (netlink_rcv_skb), one reply
// datagram per lookup, an NLMSG_ERROR for a socket that is gone, and goes
// on with the next. The sampler looks up every sender and receiver of a
// tick this way: one sendmsg and a recvmmsg or two, instead of a round
// trip per socket.

// exactReq is one lookup of a batch: a unix socket by inode, or a TCP
// connection by 4-tuple, either with the cookie it must still have.
type exactReq struct {
	kind   Kind
	ino    Inode  // KindUnix
	key    tcpKey // KindTCP
	cookie Cookie
}

// exactRes is a lookup's answer: the socket, or err (errors.Is(err,
// ErrGone) for one that no longer exists).
type exactRes struct {
	unix UnixSocket
	tcp  TCPSocket
	err  error
}

// replyScratch is where replies are parsed, kept from batch to batch so
// that a tick allocates nothing.
type replyScratch struct {
	unix []UnixSocket
	tcp  []TCPSocket
}

// errNoReply marks a lookup whose answer has not come yet.
var errNoReply = errors.New("no reply yet")

// appendExactRequests writes the requests of a batch, request i numbered
// base+i so that each reply finds its request.
func appendExactRequests(b []byte, base uint32, reqs []exactReq) []byte {
	for i := range reqs {
		r := &reqs[i]
		seq := base + uint32(i)
		if r.kind == KindUnix {
			b = appendUnixRequest(b, seq, r.ino, r.cookie, unixShowSample)
		} else {
			b = appendInetRequest(b, seq, r.key.family, inetExtSample, allStates, &r.key, r.cookie)
		}
	}
	return b
}

// takeExactReply files one reply datagram of a batch numbered from base
// under its request in res, and says which one it answered; -1 for a
// datagram of another request (left over from an abandoned one) or for a
// request already answered. A datagram that cannot be read at all is an
// error; one that answers a request badly is that request's error.
func takeExactReply(d []byte, base uint32, reqs []exactReq, res []exactRes, sc *replyScratch) (int, error) {
	if len(d) < nlmsgHdrLen {
		return -1, fmt.Errorf("%w: a %d-byte reply datagram", ErrMalformed, len(d))
	}
	i := int(ne.Uint32(d[8:12]) - base) // wraps like the sequence numbers
	if i < 0 || i >= len(reqs) || res[i].err != errNoReply {
		return -1, nil
	}
	seq := base + uint32(i)
	r := &res[i]
	var done bool
	if reqs[i].kind == KindUnix {
		got := sc.unix[:0]
		got, done, r.err = ParseUnixDiag(d, seq, got)
		sc.unix = got
		if r.err == nil && (len(got) != 1 || got[0].Inode != reqs[i].ino) {
			r.err = fmt.Errorf("%w: unix_diag lookup of socket %d answered with %d sockets", ErrMalformed, reqs[i].ino, len(got))
		} else if r.err == nil {
			r.unix = got[0]
		}
	} else {
		got := sc.tcp[:0]
		got, done, r.err = ParseInetDiag(d, seq, got)
		sc.tcp = got
		if r.err == nil && len(got) != 1 {
			r.err = fmt.Errorf("%w: inet_diag lookup answered with %d sockets", ErrMalformed, len(got))
		} else if r.err == nil {
			r.tcp = got[0]
		}
	}
	if r.err == nil && !done {
		r.err = fmt.Errorf("%w: an exact lookup's answer did not end", ErrMalformed)
	}
	return i, nil
}
