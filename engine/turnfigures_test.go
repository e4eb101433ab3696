package engine

import (
	"testing"
	"time"

	"nbdscope/model"
)

// TestWaitingSideHasItsLastTurnsTotals: in alternate mode, the sample of
// a side that has just started waiting carries its turn's figures over
// the whole turn: its counts are the sums of the counts of every sample
// from the turn's first to this one, the drain included (the run's
// summary adds the same), not that one sample's, which is the drain alone.
func TestWaitingSideHasItsLastTurnsTotals(t *testing.T) {
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	p := startPair(t, cfg)
	var turn []model.Sample // B's samples since its turn began
	running := false
	u := waitFor(t, p, 20*time.Second, "the end of one of B's turns", func(u model.Update) bool {
		s := u.Sample
		if s == nil || s.Side != "B" {
			return false
		}
		now := s.Active || s.Warming
		if now && !running {
			turn = nil
		}
		turn = append(turn, *s)
		ended := running && !now && len(turn) > 1
		running = now
		return ended
	})
	waiting := u.Sample
	if waiting.Turn == nil {
		t.Fatalf("B's first sample after its turn has no turn figures: %+v", waiting)
	}
	var bytes, recv, send, faults uint64
	for _, s := range turn {
		bytes += s.Bytes
		recv += s.Client.RecvCalls
		faults += s.Client.Faults
		if s.Server != nil {
			send += s.Server.SendCalls
		}
	}
	tf := waiting.Turn
	if tf.Bytes != bytes || tf.Client.RecvCalls != recv || tf.Client.Faults != faults || tf.Server == nil || tf.Server.SendCalls != send {
		t.Errorf("turn of %d samples: %d bytes, %d client receive calls, %d faults, server %+v; want the samples' sums %d, %d, %d, %d",
			len(turn), tf.Bytes, tf.Client.RecvCalls, tf.Client.Faults, tf.Server, bytes, recv, faults, send)
	}
	if tf.Bytes <= waiting.Bytes {
		t.Errorf("the turn's %d bytes are no more than its last sample's %d", tf.Bytes, waiting.Bytes)
	}
	if want := model.CallsPer2MiB(recv, bytes); tf.Client.RecvCallsPer2MiB != want {
		t.Errorf("turn's receive calls per 2 MiB %v, want %v (its counts over its bytes)", tf.Client.RecvCallsPer2MiB, want)
	}
}
