package model

import (
	"testing"

	"nbdscope/nbd"
)

// Figures added over samples some of whose server counts were not
// attributed (a shared --target, both loads running between reads) keep the server's
// figures over the others' payload: over all of it, 3000 calls on
// 3 × 2 MiB read 500 per 2 MiB where the known samples made 1000. A span
// not measured at all (an external target) leaves the sum unknown.
func TestAddServerOverKnownSamples(t *testing.T) {
	known := func(calls uint64) Figures {
		f := Figures{Bytes: 2 << 20, Seconds: 0.25}
		f.SetServerSpan(Counters{IO: nbd.IOStats{SendCalls: calls}}, f.Bytes, f.Seconds, f.Seconds, 0)
		return f
	}
	na := Figures{Bytes: 2 << 20, Seconds: 0.25}
	na.SetServerSpan(Counters{}, 0, 0, 0.25, 1)
	if na.Server != nil || na.ServerNA == nil || na.ServerNA.Kind != ReasonSharedServer {
		t.Fatalf("unattributed sample: server %+v, reason %+v", na.Server, na.ServerNA)
	}
	sum := known(1000).Add(na).Add(known(2000)).Add(na)
	if sum.Server == nil || sum.Server.SendCalls != 3000 || sum.Server.SendCallsPer2MiB != 1500 {
		t.Fatalf("sum's server %+v: want 3000 calls, 1500 per 2 MiB (over the two known samples)", sum.Server)
	}
	if b, s := sum.ServerBase(); sum.ServerUnattributed != 2 || b != 2*2<<20 || s != 0.5 || sum.Bytes != 4*2<<20 {
		t.Errorf("sum: %d unattributed, base %d B %.2f s of %d B: want 2, over the known samples' 4 MiB, 0.5 s", sum.ServerUnattributed, b, s, sum.Bytes)
	}
	if all := na.Add(na); all.Server != nil || all.ServerNA == nil || all.ServerUnattributed != 2 {
		t.Errorf("no sample known: server %+v, reason %+v, %d unattributed", all.Server, all.ServerNA, all.ServerUnattributed)
	}
	external := Figures{Bytes: 2 << 20, Seconds: 0.25}
	if got := known(1000).Add(external); got.Server != nil || got.ServerNA != nil {
		t.Errorf("with an external span: server %+v, reason %+v: want unknown, not n/a for sharing", got.Server, got.ServerNA)
	}
	if got := known(1000).Add(known(1000)); got.ServerUnattributed != 0 || got.ServerBytes != 0 || got.Server.SendCallsPer2MiB != 1000 {
		t.Errorf("all known: %+v, %d unattributed, base %d: want the span's own, the fields unset", got.Server, got.ServerUnattributed, got.ServerBytes)
	}
}
