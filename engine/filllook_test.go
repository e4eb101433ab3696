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

// A look made between our server and load is reused without a scan
// while their replies carry the connection figures it was made under;
// a reply with any figure changed (an accept, a close, the load's count)
// makes it due at once; ends that are not our children's (a real
// server, an exec client: a tree) are never quiet, nor the same two the
// other way round (the side's flow turned: the senders are the other's).
func TestLookQuietWhileRepliesSame(t *testing.T) {
	srv, ld := FillProc{PID: 10}, FillProc{PID: 20}
	g := connGen{server: 10, load: 20, accepted: 2, open: 2, conns: 2}
	c := &lookCache{}
	c.noteReplies("A", g)
	ss := []sockdiag.Socket{{Inode: 101, Kind: sockdiag.KindUnix, Peer: 200, Unix: sockdiag.UnixSocket{State: sockdiag.StateEstablished}}}
	senders := []sockdiag.FD{{PID: 10, FD: 7, Inode: 101}}
	c.keep("A", senders, nil, ss, senders, true)
	c.keepGen("A", srv, ld)
	if got, _, ok := c.quiet("A", srv, ld); !ok || len(got) != 1 {
		t.Fatalf("same replies: quiet %v %v, want the kept senders", got, ok)
	}
	if c.noteReplies("A", g) {
		t.Error("the same figures made the look due")
	}
	for _, changed := range []connGen{
		{server: 10, load: 20, accepted: 3, open: 2, conns: 2},
		{server: 10, load: 20, accepted: 2, open: 1, conns: 2},
		{server: 10, load: 20, accepted: 2, open: 2, conns: 3},
		{server: 11, load: 20, accepted: 2, open: 2, conns: 2},
	} {
		c.noteReplies("A", g)
		if !c.noteReplies("A", changed) {
			t.Errorf("%+v after %+v: the look not due", changed, g)
		}
		if _, _, ok := c.quiet("A", srv, ld); ok {
			t.Errorf("%+v after %+v: the look reused", changed, g)
		}
	}
	c.noteReplies("A", g)
	if _, _, ok := c.quiet("A", FillProc{PID: 10, Tree: true}, ld); ok {
		t.Error("a real server's side was quiet")
	}
	if _, _, ok := c.quiet("A", ld, srv); ok {
		t.Error("the ends the other way round (the flow turned to writes) reused the reads' senders")
	}
	var none *lookCache
	if _, _, ok := none.quiet("A", srv, ld); ok {
		t.Error("a nil cache was quiet")
	}
}
