package syscount

import "testing"

func TestSyscallNamesAndDirections(t *testing.T) {
	recv, send := 0, 0
	for s := range NumSyscalls {
		switch s.Dir() {
		case Recv:
			recv++
		case Send:
			send++
		}
	}
	if recv != 5 || send != 5 {
		t.Errorf("%d receive and %d send calls, want 5 and 5", recv, send)
	}
	if Recvmsg.String() != "recvmsg" || Sendmmsg.String() != "sendmmsg" || Sendmmsg.Dir() != Send || Recvmmsg.Dir() != Recv {
		t.Error("names or directions are off")
	}
	if NumSyscalls.String() != "Syscall(10)" || Recv.String() != "receive" || Send.String() != "send" {
		t.Error("out-of-range name or direction names are off")
	}
}

// TestEAGAINRange: the range from the three raw counters, case by case.
func TestEAGAINRange(t *testing.T) {
	for _, c := range []struct {
		name     string
		count    Count
		min, max uint64
	}{
		{"all calls on the counted fds", Count{Calls: 100, Any: 100, EAGAINAny: 30}, 30, 30},
		{"no calls on the counted fds", Count{Calls: 0, Any: 50, EAGAINAny: 20}, 0, 0},
		{"shared, few failures elsewhere possible", Count{Calls: 100, Any: 110, EAGAINAny: 30}, 20, 30},
		{"shared, failures elsewhere could explain all", Count{Calls: 100, Any: 200, EAGAINAny: 30}, 0, 30},
		{"more failures than calls on the fds", Count{Calls: 10, Any: 100, EAGAINAny: 95}, 5, 10},
		{"read skew: entries read before the exits", Count{Calls: 10, Any: 10, EAGAINAny: 12}, 10, 10},
		{"read skew: fd entries above all entries", Count{Calls: 12, Any: 10, EAGAINAny: 3}, 3, 3},
		{"nothing", Count{}, 0, 0},
	} {
		r := c.count.EAGAIN()
		if r.Min != c.min || r.Max != c.max {
			t.Errorf("%s: %+v gives %v, want %d..%d", c.name, c.count, r, c.min, c.max)
		}
	}
}

func TestCountsSumAndSub(t *testing.T) {
	var a Counts
	a.Of[Recvmsg] = Count{Calls: 10, Any: 10, EAGAINAny: 4}
	a.Of[Read] = Count{Calls: 5, Any: 15, EAGAINAny: 12}
	a.Of[Sendmsg] = Count{Calls: 7, Any: 7, EAGAINAny: 1}
	if a.Calls(Recv) != 15 || a.Calls(Send) != 7 {
		t.Errorf("calls %d/%d, want 15/7", a.Calls(Recv), a.Calls(Send))
	}
	// recvmsg exactly 4; read 2..5.
	if r := a.EAGAIN(Recv); r != (Range{Min: 6, Max: 9}) || r.String() != "6..9" {
		t.Errorf("receive EAGAIN %v, want 6..9", r)
	}
	if r := a.EAGAIN(Send); !r.Exact() || r.String() != "1" {
		t.Errorf("send EAGAIN %v, want 1", r)
	}
	b := a
	b.Of[Recvmsg] = Count{Calls: 25, Any: 25, EAGAINAny: 9}
	d := b.Sub(a)
	if d.Of[Recvmsg] != (Count{Calls: 15, Any: 15, EAGAINAny: 5}) || d.Of[Read] != (Count{}) {
		t.Errorf("Sub gives %+v", d)
	}
	if a.Sub(b).Of[Recvmsg] != (Count{}) {
		t.Error("Sub of a later reading is not floored at 0")
	}
	if a.add(d) != b {
		t.Error("add does not undo Sub")
	}
}

func TestReasonNames(t *testing.T) {
	seen := map[string]bool{}
	for r := ReasonUnsupported; r <= ReasonOff; r++ {
		s := r.String()
		if seen[s] || s == "" {
			t.Errorf("reason %d has name %q", int(r), s)
		}
		seen[s] = true
	}
	if Reason(0).String() != "Reason(0)" || (ReasonOff+1).String() != "Reason(11)" {
		t.Error("the zero reason, or one past the last, has a name")
	}
	if Mechanism(-1).String() != "Mechanism(-1)" || PerThread.String() != "perf" || Syscall(-1).String() != "Syscall(-1)" {
		t.Errorf("mechanisms and calls are named %s, %s, %s", Mechanism(-1), PerThread, Syscall(-1))
	}
	u := &Unavailable{Reason: ReasonParanoid, Why: "why", Fix: "do"}
	if u.Error() != "system calls cannot be counted: why (fix: do)" {
		t.Errorf("Error() = %q", u.Error())
	}
}
