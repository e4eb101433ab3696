package child

import (
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// loopCounts sums the event-loop turns and the receive EAGAIN of a load's
// connections.
func loopCounts(r *loadRole) (turns, eagain uint64) {
	r.connMu.Lock()
	defer r.connMu.Unlock()
	for _, lc := range r.conns {
		turns += lc.cl.Conn().LoopTurns()
		eagain += lc.cl.Conn().Stats().RecvEAGAIN
	}
	return turns, eagain
}

// TestScanTurnsQemusLoop: the scan consume mode (qemu-img convert's) on
// the ppoll reader turns qemu's event loop at each receive EAGAIN; the
// hash mode (nbdcopy's, blksum's: libnbd has no such loop) does not, and a
// live change to scan starts it. The server's reads are delayed (jitter),
// so the reader finds the socket empty.
func TestScanTurnsQemusLoop(t *testing.T) {
	uri := serveBackend(t, jitter{nbd.NewNull(1<<30, 0xff)})
	spec := wire.LoadSpec{URI: uri, Settings: wire.Start{model.SetConnections: {Int: 1}, model.SetRequestSize: {Int: 256 << 10}, model.SetInFlight: {Int: 4},
		model.SetWorkload: {Str: string(model.WorkRead)}, model.SetConsume: {Str: string(model.ConsumeHash)}, model.SetReader: {Str: string(model.ReaderPoll)}}}
	r := startLoad(t, spec)
	waitLoad(t, r, func() bool { _, eagain := loopCounts(r); return eagain >= 5 })
	if turns, eagain := loopCounts(r); turns != 0 {
		t.Errorf("hash mode: %d event-loop turns for %d EAGAIN, want none", turns, eagain)
	}
	r.setConsumeMode(wire.Cmd{Str: string(model.ConsumeScan)})
	turns0, eagain0 := loopCounts(r)
	waitLoad(t, r, func() bool { turns, _ := loopCounts(r); return turns >= turns0+5 })
	r.gate.setPaused(true) // drain the requests in flight
	turns, eagain := loopCounts(r)
	// The first reading is taken while the reader runs: an EAGAIN counted
	// before it can have its turn counted after it (25 turns for 24 EAGAIN
	// in a CI run), one at most on the one connection. More is a turn
	// without an EAGAIN.
	if turns-turns0 > eagain-eagain0+1 {
		t.Errorf("scan mode: %d event-loop turns for %d EAGAIN since the change, want one per EAGAIN", turns-turns0, eagain-eagain0)
	}
}

// waitLoad polls a running load until cond holds, for 30 s at most.
func waitLoad(t *testing.T, r *loadRole, cond func() bool) {
	t.Helper()
	waitLoadFor(t, r, 30*time.Second, cond)
}

// waitLoadFor polls a running load until cond holds, for limit at most.
func waitLoadFor(t *testing.T, r *loadRole, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); {
		if m := r.poll(); m.Errors != 0 {
			t.Fatalf("load errors: %s", m.LastErr)
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
