package realproc

import (
	"testing"

	"nbdscope/nbd"
	"nbdscope/platform/syscount"
)

// ioStatsOf takes the msg/to calls on any fd and read/write only on the
// sockets counted, and splits EAGAIN from the calls, per direction.
func TestIOStatsOf(t *testing.T) {
	var c syscount.Counts
	c.Of[syscount.Recvmsg] = syscount.Count{Calls: 0, Any: 100, EAGAINAny: 20} // counted on any fd
	c.Of[syscount.Read] = syscount.Count{Calls: 5, Any: 900, EAGAINAny: 300}   // eventfd reads elsewhere
	c.Of[syscount.Sendmsg] = syscount.Count{Calls: 0, Any: 40, EAGAINAny: 4}
	c.Of[syscount.Write] = syscount.Count{Calls: 0, Any: 500}
	got := ioStatsOf(c)
	want := nbd.IOStats{RecvCalls: 80 + 5, RecvEAGAIN: 20, SendCalls: 36, SendEAGAIN: 4}
	if got != want {
		t.Fatalf("ioStatsOf: %+v, want %+v", got, want)
	}
}
