package child

import (
	"errors"
	"fmt"

	"nbdscope/nbd"
)

// A load process measures one target; once a connection to it is lost
// (EPIPE, ECONNRESET, EOF: the server died or dropped us) every figure after
// that would be a measurement of nothing. So the first such loss fails the
// whole role: the child tells the controller why, naming the target, and
// exits with a non-zero status (see serve in child.go). A poll reply
// says so too (Lost), so the controller's last look at a run (settle)
// knows to wait for the crash report.

// checkLost reports cl's terminal error as the loss of the target, unless
// the connection is working or we closed it ourselves. Lost also looks at
// a connection whose reader is parked with nothing in flight.
func (r *loadRole) checkLost(cl *nbd.Client) {
	err := cl.Lost()
	if err == nil || errors.Is(err, nbd.ErrClientClosed) || r.ctx.Err() != nil {
		return
	}
	lost := fmt.Errorf("target %s: connection lost: %w", r.uri, err)
	text := lost.Error()
	if r.lostText.CompareAndSwap(nil, &text) { // the first loss is the one reported
		r.lost <- lost // room for one
	}
}

// failed implements failer.
func (r *loadRole) failed() <-chan error { return r.lost }
