package engine

import (
	"testing"
	"time"
)

// TestKeepTurn: a change of the side whose turn it is leaves it at least
// half a slice to show, where it once restarted the whole turn at every
// change, so that changes at every turn (-t 6 -i 0.5 --at 2s:… --at 4s:…)
// left the other side no turn; a side holds the turn at most two slices
// since it got it, and a turn is never cut short.
func TestKeepTurn(t *testing.T) {
	const slice = 2 * time.Second
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, c := range []struct {
		name              string
		turnAt, held, now time.Duration // from t0
		want              time.Duration // the slice counts from
	}{
		{"early in the turn: it goes on as it was", 0, 0, 500 * time.Millisecond, 0},
		{"at the turn's end: half a slice more", 0, 0, 1900 * time.Millisecond, 900 * time.Millisecond},
		{"held nearly two slices: up to two slices since it got it", 1500 * time.Millisecond, 0, 3600 * time.Millisecond, 2 * time.Second},
		{"held two slices: no more", 2 * time.Second, 0, 3900 * time.Millisecond, 2 * time.Second},
		{"never earlier than it was", 1800 * time.Millisecond, 0, 1900 * time.Millisecond, 1800 * time.Millisecond},
	} {
		got := keepTurn(at(c.turnAt), at(c.held), at(c.now), slice)
		if want := at(c.want); !got.Equal(want) {
			t.Errorf("%s: the slice counts from %v, want %v", c.name, got.Sub(t0), c.want)
		}
	}
	// However often the side changes, its turn ends by two slices after
	// it got it.
	turnAt, held := t0, t0
	for now := t0; now.Before(at(10 * time.Second)); now = now.Add(100 * time.Millisecond) {
		if now.Sub(turnAt) >= slice {
			break // the turn passes
		}
		turnAt = keepTurn(turnAt, held, now, slice)
	}
	if end := turnAt.Add(slice); end.After(at(2 * slice)) {
		t.Errorf("a change every 100 ms kept the turn until %v, want by %v", end.Sub(t0), 2*slice)
	}
}
