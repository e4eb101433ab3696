package interop

import (
	"testing"

	"nbdscope/model"
)

// TestRealServerRcvBufLive: the server's receive buffer (k's server
// rcvbuf, --at b.server-rcvbuf) changes a running qemu-nbd's own data
// socket: an independent getsockopt on a copy of qemu-nbd's socket reads
// the new value (twice the request), the event has it read back and the
// sockets it reached, and default gives the socket its own value back.
func TestRealServerRcvBufLive(t *testing.T) {
	need(t, "qemu-nbd")
	const size = "1073742336" // 1 GiB + 512: marks this test's qemu-nbd
	rep, r, seen, last := runWatching(t, `"size":`+size, anySocket(func(b sockBufs) bool { return b.rcv == 2<<20 }),
		"--server-b", qemuNbdNull, "--size-b", size, "--at", "2s:b.server-rcvbuf=1m", "--at", "4s:b.server-rcvbuf=default", "--duration", "5s")
	if !seen {
		t.Errorf("qemu-nbd's data socket never had SO_RCVBUF 2m (the 1m request) on its own socket; last look: %+v\n%s", last, r)
	}
	set, back := setAndBack(rep, model.SetServerRcvBuf, "1m")
	if set == nil || set.Effective != 2<<20 || set.Reached == nil || *set.Reached < 1 {
		t.Fatalf("want B's server-rcvbuf event with 2m read back from at least one socket: %+v\n%s", set, r)
	}
	own := rep.Sides[1].Summary.SndBuf.ServerRcvOwn
	if back == nil || own <= 0 || back.Effective != own {
		t.Errorf("default should give the socket its own receive buffer %d back: %+v", own, back)
	}
}

// setAndBack are B's events of setting: the change to to, and the change
// back from it.
func setAndBack(rep model.Report, setting, to string) (set, back *model.Event) {
	for i, e := range rep.Events {
		if e.Side == "B" && e.Setting == setting {
			if e.To == to {
				set = &rep.Events[i]
			} else {
				back = &rep.Events[i]
			}
		}
	}
	return set, back
}
