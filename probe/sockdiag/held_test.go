package sockdiag

import "testing"

// TestSamplerHeld: sockets with a holder are read through it once they
// are found, with no netlink lookup; the figures are those netlink gives.
func TestSamplerHeld(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			k := newFakeKernel()
			k.pair(10, 11, 200000, 212992, 180000) // 94%: full
			k.pair(20, 21, 1000, 212992, 0)        // empty
			k.tcpConn(30, 31, 60000, 65536, 50000) // 92%: full
			s := testSampler(t, k, mode)
			s.SetHeld("A", []FD{k.hold(7, 3, 10), k.hold(7, 4, 20), k.hold(8, 5, 30)})
			s.tick() // finds them: the dumps
			found := k.calls
			s.Take("A")
			ticks(s, 10)
			a := s.Take("A")
			if a.Samples != 30 || a.Errors != 0 || a.FullPct < 66.6 || a.FullPct > 66.7 || a.EmptyPct < 33.3 ||
				a.MeanBytes != (200000+1000+60000)/3.0 || a.Limit != 212992 {
				t.Errorf("window %+v", a)
			}
			if k.calls != found || k.lookups != 0 {
				t.Errorf("%d netlink round trips and %d lookups after the sockets were found, want none", k.calls-found, k.lookups)
			}
			if k.heldReads != 3*11 {
				t.Errorf("%d reads through holders, want 3 sockets × 11 ticks", k.heldReads)
			}
		})
	}
}

// TestSamplerHeldFallsBack: a process that refuses duplicates is asked
// once, and its sockets are read by netlink with the same figures; a
// descriptor that no longer holds its socket (closed, its number reused)
// is read by netlink too, which says when the socket is gone.
func TestSamplerHeldFallsBack(t *testing.T) {
	k := newFakeKernel()
	k.pair(10, 11, 200000, 212992, 0)
	k.pair(20, 21, 1000, 212992, 0)
	k.pair(40, 41, 1000, 212992, 0)
	k.refuse = map[int]bool{9: true}
	s := testSampler(t, k, ModeExact)
	s.SetHeld("A", []FD{k.hold(9, 3, 10), k.hold(9, 4, 20), k.hold(7, 5, 40)})
	ticks(s, 5)
	if a := s.Take("A"); a.Samples != 15 || a.Errors != 0 || a.MeanBytes != (200000+1000+1000)/3.0 {
		t.Errorf("refused: window %+v", a)
	}
	// 1 refusal, then PID 7's socket on every tick.
	if k.heldReads != 1+5 {
		t.Errorf("%d reads through holders, want 5: a refusing process is asked once", k.heldReads)
	}

	k.hold(7, 5, 99) // PID 7 closed fd 5 and reused the number
	lookups := k.lookups
	ticks(s, 3)
	if a := s.Take("A"); a.Samples != 9 || k.lookups-lookups != 2*9 {
		t.Errorf("moved: window %+v after %d lookups, want all three senders and their receivers by netlink", a, k.lookups-lookups)
	}
	delete(k.unix, 40)
	if a := s.Take("A"); len(a.Gone) != 0 {
		t.Fatalf("%+v", a)
	}
	s.tick()
	if a := s.Take("A"); len(a.Gone) != 1 || a.Gone[0] != 40 {
		t.Errorf("gone: window %+v", a)
	}
}

// TestSamplerHeldForgets: a process none of whose sockets is sampled any
// more has its pidfd closed.
func TestSamplerHeldForgets(t *testing.T) {
	k := newFakeKernel()
	k.pair(10, 11, 0, 212992, 0)
	k.pair(20, 21, 0, 212992, 0)
	s := testSampler(t, k, ModeAuto)
	s.SetHeld("A", []FD{k.hold(7, 3, 10)})
	s.SetHeld("B", []FD{k.hold(8, 3, 20)})
	s.tick()
	s.Remove("B")
	s.tick()
	if !k.forgotten[8] || k.forgotten[7] {
		t.Errorf("forgotten %v, want PID 8 only", k.forgotten)
	}
}
