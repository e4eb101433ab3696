package engine

import (
	"testing"

	"nbdscope/probe/sockdiag"
)

// A look is reused only while both processes hold the same sockets and
// none of the sender's could still connect: of five polls with the
// sockets unchanged, four reuse the first look; a changed fd, or a
// sender socket not yet connected, makes each poll look again.
func TestLookCacheReuse(t *testing.T) {
	snd := []sockdiag.FD{{PID: 10, FD: 3, Inode: 100}, {PID: 10, FD: 7, Inode: 101}}
	rcv := []sockdiag.FD{{PID: 20, FD: 5, Inode: 200}}
	described := []sockdiag.Socket{
		{Inode: 100, Kind: sockdiag.KindUnix, Unix: sockdiag.UnixSocket{State: sockdiag.StateListen}},
		{Inode: 101, Kind: sockdiag.KindUnix, Peer: 200, Unix: sockdiag.UnixSocket{State: sockdiag.StateEstablished}},
		{Inode: 102, Kind: 0}, // in neither listing: never data
	}
	senders := []sockdiag.FD{snd[1]}
	polls := func(c *lookCache, ss []sockdiag.Socket, sfds func(i int) []sockdiag.FD) (looks int) {
		for i := range 5 {
			if got, _, ok := c.reuse("A", sfds(i), rcv); ok {
				if len(got) != 1 || got[0] != senders[0] {
					t.Fatalf("reused %v, want %v", got, senders)
				}
				continue
			}
			looks++
			c.keep("A", sfds(i), rcv, ss, senders, true)
		}
		return looks
	}
	same := func(int) []sockdiag.FD { return snd }
	if n := polls(&lookCache{}, described, same); n != 1 {
		t.Errorf("unchanged sockets: %d looks in 5 polls, want 1", n)
	}
	moving := func(i int) []sockdiag.FD {
		return []sockdiag.FD{snd[0], {PID: 10, FD: 7 + i, Inode: 101}}
	}
	if n := polls(&lookCache{}, described, moving); n != 5 {
		t.Errorf("an fd changing at each poll: %d looks in 5 polls, want 5", n)
	}
	connecting := append([]sockdiag.Socket{}, described...)
	connecting[1].Peer, connecting[1].Unix.State = 0, sockdiag.StateEstablished
	if n := polls(&lookCache{}, connecting, same); n != 5 {
		t.Errorf("a sender socket with no peer yet: %d looks in 5 polls, want 5", n)
	}
	var none *lookCache // DataSenders' own: nothing kept
	if _, _, ok := none.reuse("A", snd, rcv); ok {
		t.Error("a nil cache reused a look")
	}
}
