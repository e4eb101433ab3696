package model

import (
	"math/rand/v2"
	"testing"
)

// Property: for generated figures, the verdict's kinds follow their one
// rule each: contention names the longer waiter for a CPU exactly when
// one waited ContendedShare of the span or more, and the waiter the fill
// names is the bound process only when that process is a side, never a
// shared core or nobody. Package phrase checks that the words of each
// kind agree with the same figures.
func TestVerdictKindsFollowTheirRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 4))
	wait := func() Figure {
		if rng.IntN(5) == 0 {
			return Unknown
		}
		return Figure(rng.IntN(13)) / 20 // 0 to 0.6 in twentieths: the threshold and ties come up
	}
	for i := 0; i < 5000; i++ {
		full := Figure(rng.IntN(101))
		p := Pace{Client: Figure(rng.Float64()), Server: Figure(rng.Float64()), ClientWaiting: wait(), ServerWaiting: wait(),
			Bound: []string{BoundNone, BoundClient, BoundServer, BoundCore}[rng.IntN(4)],
			Fill:  Fill{Samples: 400, FullPct: full, EmptyPct: Figure(rng.IntN(101 - int(full))), Limit: 1 << 20},
			Flow:  []Flow{FlowRead, FlowWrite}[rng.IntN(2)]}
		v := VerdictOfPace(p)
		cw, sw := p.ClientWaiting, p.ServerWaiting
		var want string
		switch {
		case sw.Known() && sw >= ContendedShare && (!cw.Known() || sw >= cw):
			want = BoundServer
		case cw.Known() && cw >= ContendedShare:
			want = BoundClient
		}
		if v.Contended != want || want != "" && v.WaitingFor() < ContendedShare {
			t.Fatalf("waits %v (client) %v (server): contended %q waiting %v, want %q", cw, sw, v.Contended, v.WaitingFor(), want)
		}
		if v.Wait != FillVerdictOf(p.Fill) {
			t.Fatalf("fill %+v: wait %q, want %q", p.Fill, v.Wait, FillVerdictOf(p.Fill))
		}
		if (v.BoundWaiter() || v.BoundOther()) && (v.Bound == BoundNone || v.Bound == BoundCore) {
			t.Fatalf("bound %q named as a waiter (%q)", v.Bound, v.Wait)
		}
		if v.BoundWaiter() && v.BoundOther() {
			t.Fatalf("bound %q both the waiter and the one waited on (%q, %s)", v.Bound, v.Wait, v.Flow)
		}
	}
}
