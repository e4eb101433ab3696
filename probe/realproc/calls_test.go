package realproc

import (
	"errors"
	"strings"
	"testing"

	"nbdscope/nbd"
	"nbdscope/probe/syscount"
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

// NBDSCOPE_SYSCOUNT=off makes Probe refuse with its own reason and the
// fix; a value it does not know is refused too, naming the variable.
func TestProbeHonoursCountingEnv(t *testing.T) {
	t.Setenv(CountingEnv, "off")
	err := Probe()
	var u *syscount.Unavailable
	if !errors.As(err, &u) || u.Reason != syscount.ReasonOff {
		t.Fatalf("Probe with %s=off: %v, want an Unavailable with ReasonOff", CountingEnv, err)
	}
	if why, fix := NA(err); !strings.Contains(why, CountingEnv+"=off") || fix != "unset "+CountingEnv {
		t.Fatalf("NA: why %q, fix %q", why, fix)
	}
	t.Setenv(CountingEnv, "no")
	if err := Probe(); err == nil || !strings.Contains(err.Error(), CountingEnv+`="no"`) {
		t.Fatalf("Probe with %s=no: %v, want an error naming it", CountingEnv, err)
	}
	t.Setenv(CountingEnv, "on")
	if err := Probe(); errors.As(err, &u) && u.Reason == syscount.ReasonOff {
		t.Fatalf("Probe with %s=on: %v", CountingEnv, err)
	}
}
